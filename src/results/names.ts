/**
 * The names a batch's files take in results/ and archive/ (docs/result-files.md): the
 * input's stem and the day the batch was received, so a name an export program reuses
 * every week (`fornecedores.csv`) gets a result and an archive of its own each time,
 * and week 1's are still there after a year. Pure: no clock, no file system.
 */
import { givenName } from '../csv/given-name.js';

/**
 * The days in names are counted in São Paulo's time, where the accountants are: a file
 * dropped at 22:30 on a Monday is Monday's, although UTC has turned to Tuesday.
 */
export const BATCH_TIME_ZONE = 'America/Sao_Paulo';

const DAY_FORMAT = new Intl.DateTimeFormat('en-US', {
  timeZone: BATCH_TIME_ZONE,
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});

function partsOf(ms: number): Record<string, string> {
  return Object.fromEntries(
    DAY_FORMAT.formatToParts(new Date(ms)).map((part) => [part.type, part.value]),
  );
}

/** `2026-11-23`: the day `ms` falls on in São Paulo. */
export function batchDay(ms: number): string {
  const { year, month, day } = partsOf(ms);
  return `${year}-${month}-${day}`;
}

/** The extension a name ends with (`.csv`), or none. */
function splitExtension(name: string): [stem: string, extension: string] {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
}

/**
 * The names a batch's result may take, first choice first: `<stem>.<day>.result.csv`,
 * then `<stem>.<day> [2].result.csv` … `[9]` for more batches of that name on one day,
 * then one with the batch's number, which no other batch has. The ` [n]` a file was
 * given in processing/ (another of its name was there) is not part of its stem.
 */
export function resultFileNames(inputName: string, batchId: number, receivedAt: number): string[] {
  const stem = splitExtension(givenName(inputName))[0];
  const dated = `${stem}.${batchDay(receivedAt)}`;
  return [
    `${dated}.result.csv`,
    ...[2, 3, 4, 5, 6, 7, 8, 9].map((n) => `${dated} [${n}].result.csv`),
    `${dated} [batch ${batchId}].result.csv`,
  ];
}

/**
 * The name an input file is archived under: its result's name with the input's own
 * extension (`fornecedores.2026-11-23.result.csv` -> `fornecedores.2026-11-23.csv`), so
 * the two are found side by side. A result named by an older version (`payroll.result.csv`)
 * gives the name the file had.
 */
export function archiveFileName(resultName: string, inputName: string): string {
  return resultName.replace(/\.result\.csv$/, '') + splitExtension(inputName)[1];
}
