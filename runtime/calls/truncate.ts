/** A tool result as a model sees it: the value itself, or a cut JSON preview when it is longer than `maxChars`. */
export function truncateForModel(output: unknown, maxChars: number): unknown {
  const json = JSON.stringify(output) ?? 'null';
  if (json.length <= maxChars) return output;
  return { truncated: true, totalChars: json.length, preview: json.slice(0, maxChars) };
}
