import { describe, expect, it } from 'vitest';
import { formatRatio } from '../../bin/bench/stats.ts';

describe('bench ratios as printed', () => {
  it('never prints a positive ratio as 0.00: under 0.1 it keeps two significant digits', () => {
    expect(formatRatio(0.0042)).toBe('0.0042');
    expect(formatRatio(0.004)).toBe('0.0040');
    expect(Number(formatRatio(0.0042))).toBeGreaterThan(0);
    expect(formatRatio(0.08)).toBe('0.080');
  });

  it('prints two decimals from 0.1 up, and for 0', () => {
    expect(formatRatio(1)).toBe('1.00');
    expect(formatRatio(0.1)).toBe('0.10');
    expect(formatRatio(2.345)).toBe('2.35');
    expect(formatRatio(0)).toBe('0.00');
  });
});
