/** The commands a run printed for a person, as a person copies them. */

/** Each `payouts approve "FILE" --flag …` printed (once, however often), split as a shell would. */
export function approveCommands(text: string): string[][] {
  const printed = new Set(
    [...text.matchAll(/payouts (approve "[^"]+"(?: --[a-z-]+(?: \d+)?)*)/g)].map(
      (match) => match[1] ?? '',
    ),
  );
  return [...printed].map((command) =>
    [...command.matchAll(/"([^"]+)"|(\S+)/g)].map((part) => part[1] ?? part[2] ?? ''),
  );
}
