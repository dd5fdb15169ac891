export { specToGraph } from './spec-to-graph.ts';
export { graphToSpec } from './graph-to-spec.ts';
export { transitionLabel, labelLines, branchOrder, elide, GUARD_LABEL_MAX, type BranchOrder } from './labels.ts';
export { parsePointer, toPointer, getAt, setAt, renameKey, isWithin } from './pointer.ts';
export { NODE_WIDTH, GROUP_HEADER, GROUP_PADDING, NODE_PARTS, LARGE_MACHINE_STATES, leafSize } from './sizes.ts';
export { addState, deleteState, setStateLayout, replaceLayout, checkStateName, freshStateName } from './edit-states.ts';
export {
  addTransition,
  deleteTransition,
  updateTransition,
  readTransition,
  changeTransitionEvent,
  changeTransitionDelay,
  setOutcomeTarget,
  type TransitionPlace,
} from './edit-transitions.ts';
export { renameState } from './rename.ts';
export { moveBranch, markFallback } from './edit-branches.ts';
export { moveState } from './move.ts';
export {
  computeLayout,
  computeGeometry,
  toElkGraph,
  type ElkLayouter,
  type ElkGraphNode,
  type ElkGraphEdge,
  type ElkPort,
} from './layout.ts';
export {
  absoluteBoxes,
  routeIfCurrent,
  estimateLabel,
  FIT_ZOOM_FLOOR,
  LABEL_FONT_PX,
  LABEL_LINE_PX,
  LABEL_PAD_X,
  LABEL_PAD_Y,
  type Box,
  type Point,
  type EdgeGeometry,
  type LayoutGeometry,
  type LabelMeasure,
} from './geometry.ts';
export { elementForProblem, problemsByElement, type ProblemTarget } from './problems.ts';
export { GRAPH_ERROR_CODES, type GraphErrorCode, type EditResult } from './errors.ts';
export { locateState, allStateNames, forEachTransition } from './walk.ts';
export type {
  GraphNode,
  GraphEdge,
  SpecGraph,
  StateNodeData,
  TransitionEdgeData,
  TransitionKind,
  TransitionForm,
  TransitionSlot,
  StateSkeleton,
} from './types.ts';
export { fillMissingLayout, statesWithoutLayout } from './layout-fill.ts';
export { quickLayout } from './quick-layout.ts';
export { fitViewport, graphBounds } from './fit.ts';
export { emitsByState, channelNames, type StateEmit } from './channels.ts';
export { handoffTargets, handoffOfBranch } from './handoffs.ts';
export { memoryLine, type MemoryLine } from './memory-line.ts';
