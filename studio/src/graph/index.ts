export { specToGraph } from './spec-to-graph.ts';
export { graphToSpec } from './graph-to-spec.ts';
export { transitionLabel } from './labels.ts';
export { parsePointer, toPointer, getAt, setAt, renameKey, isWithin } from './pointer.ts';
export { NODE_WIDTH, GROUP_HEADER, GROUP_PADDING, leafSize } from './sizes.ts';
export { addState, deleteState, setStateLayout, replaceLayout, checkStateName, freshStateName } from './edit-states.ts';
export {
  addTransition, deleteTransition, updateTransition, readTransition, changeTransitionEvent, changeTransitionDelay,
  setOutcomeTarget, type TransitionPlace,
} from './edit-transitions.ts';
export { renameState } from './rename.ts';
export { moveState } from './move.ts';
export { computeLayout, type ElkLayouter, type ElkGraphNode } from './layout.ts';
export { elementForProblem, problemsByElement, type ProblemTarget } from './problems.ts';
export { GRAPH_ERROR_CODES, type GraphErrorCode, type EditResult } from './errors.ts';
export { locateState, allStateNames, forEachTransition } from './walk.ts';
export type {
  GraphNode, GraphEdge, SpecGraph, StateNodeData, TransitionEdgeData, TransitionKind, TransitionForm, TransitionSlot, StateSkeleton,
} from './types.ts';
export { fillMissingLayout, statesWithoutLayout } from './layout-fill.ts';
