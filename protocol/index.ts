export {
  RUNTIME_EVENT_TYPES,
  SESSION_STATUSES,
  FINISHED_STATUSES,
  SESSION_ID_PATTERN,
  type RuntimeEvent,
  type RuntimeEventType,
  type SessionStatus,
} from './events.ts';
export { contextChange, applyContextChange, changesContext, type ContextChange } from './context-change.ts';
export {
  sessionAt,
  foldEvent,
  activeStatePaths,
  EMPTY_SESSION_AT,
  type SessionAt,
  type FoldableEvent,
  type PendingCall,
  type ApprovalAt,
  type RejectionAt,
} from './session-at.ts';
export {
  parseSessionFile,
  createSessionFileReader,
  type SessionFileReader,
  sessionFileSpecNotice,
  SESSION_FILE_KIND,
  SESSION_FILE_FORMAT_VERSION,
  MAX_SESSION_FILE_CHARS,
  MAX_SESSION_FILE_LINE_CHARS,
  MAX_SESSION_FILE_DEPTH,
  type SessionFile,
  type SessionFileHeader,
  type SessionFileProblem,
  type SessionFileRefusal,
  type JournalEntry,
} from './session-file.ts';
export {
  FlowingError,
  isFlowError,
  toFlowError,
  type FlowError,
  type KnownErrorCode,
  type DeclaredCode,
} from './errors/flowing-error.ts';
export { RUNTIME_ERROR_CODES, type RuntimeErrorCode } from './errors/runtime-codes.ts';
export { STORE_ERROR_CODES, type StoreErrorCode } from './errors/store-codes.ts';
export { INSPECT_ERROR_CODES, type InspectErrorCode } from './errors/inspect-codes.ts';
export { TESTING_ERROR_CODES, type TestingErrorCode } from './errors/testing-codes.ts';
export { SERVER_ERROR_CODES, RUNTIME_CODE_STATUS, statusOf, type ServerErrorCode } from './errors/server-codes.ts';
export { STUDIO_ERROR_CODES, type StudioErrorCode } from './errors/studio-codes.ts';
export type {
  HealthView,
  ReadinessView,
  RuntimeMachine,
  MachineList,
  MachineStateCounts,
  StaleInfo,
  StaleReason as StaleReasonView,
  SessionSummary,
  SessionPage,
  PendingApproval,
  SessionView,
  ChildWaitView,
  EventPage,
  SendAnswer,
  StreamResult,
  SessionAtView,
  ForkView,
  XStateRecord,
  XStateRecords,
} from './views.ts';
export {
  CreateSessionBody,
  DecisionBody,
  CancelBody,
  ResolutionBody,
  ForkBody,
  RUNTIME_ROUTES,
  routeUrl,
  type Resolution,
  type ForkRequest,
  type EventBody,
  type QueryValue,
  type RuntimeRoutes,
  type RouteKey,
  type JsonRouteKey,
  type RouteMethod,
  type RoutePath,
  type RouteResponse,
  type RouteBody,
  type RouteQuery,
  type RouteParams,
  type RouteInput,
} from './routes.ts';
