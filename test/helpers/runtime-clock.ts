export { createVirtualClock as createManualClock, settle, type VirtualClock as ManualClock } from '@flowing/runtime';
