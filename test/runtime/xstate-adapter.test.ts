import { describe, expect, it } from 'vitest';
import { checkXStateInternals } from '../../runtime/xstate-adapter.ts';

describe('the XState adapter (every use of XState internals, in runtime/xstate-adapter.ts)', () => {
  it('finds each internal it relies on in the installed xstate, with the shape it expects', () => {
    // On an xstate upgrade that removes or changes one, this names the symbol instead of sessions failing oddly.
    expect(checkXStateInternals()).toEqual([]);
  });
});
