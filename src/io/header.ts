/** Gives every header cell a unique, trimmed name; duplicates become "Email (2)", blanks "(column 3)". */
export function uniqueHeader(raw: readonly string[]): string[] {
  const taken = new Set<string>();
  const names: string[] = [];
  raw.forEach((cell, i) => {
    const base = cell.trim() === '' ? `(column ${i + 1})` : cell.trim();
    let name = base;
    for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${base} (${n})`;
    taken.add(name.toLowerCase());
    names.push(name);
  });
  return names;
}
