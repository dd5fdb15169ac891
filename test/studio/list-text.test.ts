import { describe, expect, it } from 'vitest';
import { listText, splitList } from '../../studio/src/components/list-text.ts';

describe('comma-separated list fields', () => {
  it('keeps a trailing comma and space while the next name is typed', () => {
    let draft = '';
    let list: string[] = [];
    for (const key of 'orderId, request') {
      draft = listText(draft, list) + key;
      list = splitList(draft);
      expect(listText(draft, list)).toBe(draft);
    }
    expect(list).toEqual(['orderId', 'request']);
  });

  it('shows the stored list once it no longer matches what was typed (an undo)', () => {
    expect(listText('a, b,', ['a'])).toBe('a');
    expect(listText(undefined, ['a', 'b'])).toBe('a, b');
  });

  it('drops empty entries', () => {
    expect(splitList(' a,, b ,')).toEqual(['a', 'b']);
  });
});
