// dynalite measures a string by its JavaScript length (UTF-16 code units); DynamoDB counts the
// UTF-8 bytes of every attribute name and string value toward the 400 KB item limit. So dynalite
// accepts an item of 136,000 '€' (408,000 bytes to dynalite, 1.2 MB to DynamoDB) that DynamoDB
// refuses. This adds back what dynalite leaves out, so the local item size is DynamoDB's.

/** A DynamoDB attribute value in the wire format: `{ "S": "…" }`, `{ "M": { … } }`, … */
type AttributeValue = Readonly<Record<string, unknown>>;

function excess(text: string): number {
  return Buffer.byteLength(text) - text.length;
}

function valueExcess(value: AttributeValue): number {
  const [type, inner] = Object.entries(value)[0] ?? [];
  if (type === 'S' && typeof inner === 'string') return excess(inner);
  if (type === 'SS' && Array.isArray(inner)) {
    return inner.reduce((sum: number, text: string) => sum + excess(text), 0);
  }
  if (type === 'L' && Array.isArray(inner)) {
    return inner.reduce((sum: number, item: AttributeValue) => sum + valueExcess(item), 0);
  }
  if (type === 'M' && typeof inner === 'object' && inner !== null) {
    return utf8Excess(inner as Readonly<Record<string, AttributeValue>>);
  }
  return 0;
}

/** UTF-8 bytes of an item's names and strings beyond their UTF-16 lengths. */
export function utf8Excess(item: Readonly<Record<string, AttributeValue>>): number {
  let sum = 0;
  for (const [name, value] of Object.entries(item)) sum += excess(name) + valueExcess(value);
  return sum;
}
