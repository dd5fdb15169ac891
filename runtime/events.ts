// The envelope and the event types are the wire protocol every client reads: they live in @flowing/protocol.
export { RUNTIME_EVENT_TYPES, type RuntimeEvent, type RuntimeEventType } from '@flowing/protocol';

/**
 * Freezes an event: the envelope, its data and the plain objects and arrays directly inside the data. Deeper values
 * are contexts and outputs the machine already treats as immutable; walking them again for every event would cost
 * more than the whole rest of logging.
 */
export function freezeEvent<T extends object>(event: T & { data: object }): T {
  const data = event.data as Record<string, unknown>;
  for (const key in data) {
    const value = data[key];
    if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
      const proto = Object.getPrototypeOf(value);
      if (proto === Object.prototype || proto === Array.prototype) Object.freeze(value);
    }
  }
  Object.freeze(data);
  return Object.freeze(event);
}
