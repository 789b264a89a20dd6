// Confluent's subject name strategies, as REST Proxy's `subject_name_strategy` names them.
export type SubjectNameStrategy = 'TOPIC_NAME' | 'RECORD_NAME' | 'TOPIC_RECORD_NAME';

export function subjectName(
  strategy: SubjectNameStrategy,
  topic: string,
  part: 'key' | 'value',
  recordName: string | undefined,
): string | undefined {
  if (strategy === 'TOPIC_NAME') return `${topic}-${part}`;
  if (recordName === undefined) return undefined;
  return strategy === 'RECORD_NAME' ? recordName : `${topic}-${recordName}`;
}
