import { describe, expect, it } from 'vitest';
import { utf8Excess } from '../../../../infra/local/dynamodb-item-size.js';

// What dynalite's UTF-16 count leaves out of DynamoDB's UTF-8 item size (the refusal itself,
// against dynalite: test/integration/dynamodb-item-size.test.ts).
describe('the UTF-8 bytes dynalite leaves out of an item size', () => {
  it('is nothing for ASCII names and strings, numbers and binaries', () => {
    expect(utf8Excess({ pk: { S: 'key' }, n: { N: '12345' }, b: { B: 'AAEC' } })).toBe(0);
  });

  it('counts every extra byte of names, strings and string sets, inside lists and maps', () => {
    // 'é' is 2 bytes (1 unit), '€' 3 bytes (1 unit), '😀' 4 bytes (2 units).
    expect(utf8Excess({ é: { S: 'a' } })).toBe(1);
    expect(utf8Excess({ v: { S: '€😀' } })).toBe(2 + 2);
    expect(utf8Excess({ v: { SS: ['é', '€'] } })).toBe(1 + 2);
    expect(utf8Excess({ v: { L: [{ S: 'é' }, { M: { '€': { S: '€' } } }] } })).toBe(1 + 2 + 2);
  });
});
