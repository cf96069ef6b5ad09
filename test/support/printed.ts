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

/**
 * The words of the first `payouts …` command in `text` that starts with `start`, split as
 * a shell would: double quotes keep a word whole, and `;` ends the command.
 */
export function printedCommand(text: string, start: string): string[] {
  const from = text.indexOf(`payouts ${start}`);
  if (from < 0) return [];
  const line = text.slice(from + 'payouts '.length).split(/[;\n]/)[0] ?? '';
  return [...line.matchAll(/"([^"]*)"|([^\s"]+)/g)].map((part) => part[1] ?? part[2] ?? '');
}
