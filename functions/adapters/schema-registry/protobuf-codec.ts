import protobuf from 'protobufjs';
import { type Codec, joinPath, type SchemaIssue } from './codec.js';

// The first message of the file, as Confluent's serializers choose by default; its message
// indexes ([0]) are written as the single byte 0 before the message.
const FIRST_MESSAGE_INDEXES = Uint8Array.of(0);

/**
 * Protobuf values as JSON objects with proto3's JSON field names (lowerCamelCase); 64-bit
 * integers as numbers. Fields the message does not declare are refused, not dropped.
 */
export function protobufCodec(schema: string): Codec {
  const parsed = protobuf.parse(schema);
  if ((parsed.imports ?? []).length > 0) throw new Error('imports (references) are not resolved');
  const scope = parsed.package ? parsed.root.lookup(parsed.package) : parsed.root;
  const message = (scope as protobuf.Namespace | null)?.nestedArray.find(
    (nested): nested is protobuf.Type => nested instanceof protobuf.Type,
  );
  if (message === undefined) throw new Error('the file declares no message');
  parsed.root.resolveAll();
  return {
    type: 'PROTOBUF',
    recordName: message.fullName.replace(/^\./, ''),
    encode(value) {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        return { issue: { path: '', message: `must be an object (${message.name})` } };
      }
      const issue = undeclared(message, value, '') ?? verified(message, value);
      if (issue) return { issue };
      const body = message.encode(message.fromObject(value)).finish();
      return { bytes: Buffer.concat([FIRST_MESSAGE_INDEXES, body]) };
    },
  };
}

function verified(message: protobuf.Type, value: object): SchemaIssue | undefined {
  const problem = message.verify(value as Record<string, unknown>);
  if (problem === null) return undefined;
  const colon = problem.indexOf(': ');
  return colon < 0
    ? { path: '', message: problem }
    : { path: problem.slice(0, colon), message: `must be ${problem.slice(colon + 2)}` };
}

/** protobufjs ignores fields a message does not declare; REST Proxy refuses them. */
function undeclared(message: protobuf.Type, value: object, path: string): SchemaIssue | undefined {
  for (const [key, fieldValue] of Object.entries(value)) {
    const field = message.fields[key];
    const at = joinPath(path, key);
    if (field === undefined) return { path: at, message: `is not a field of ${message.name}` };
    if (!(field.resolvedType instanceof protobuf.Type) || fieldValue === null) continue;
    const nested: Array<[unknown, string]> = field.repeated
      ? (Array.isArray(fieldValue) ? fieldValue : []).map((item, i) => [item, joinPath(at, i)])
      : field.map
        ? Object.entries(fieldValue as object).map(([k, item]) => [item, joinPath(at, k)])
        : [[fieldValue, at]];
    for (const [item, itemPath] of nested) {
      if (item === null || typeof item !== 'object') continue; // verify names the type mismatch
      const issue = undeclared(field.resolvedType, item, itemPath);
      if (issue) return issue;
    }
  }
  return undefined;
}
