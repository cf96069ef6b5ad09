/**
 * A file's name as the accountant gave it. A file whose name is taken in one of the
 * home's folders is given a mark there (`folha [2].csv`, `folha [batch 12].csv`, see
 * moveInto): the tool's, never shown to a person, who tells two files of one name apart
 * by their batch numbers.
 */
const FOLDER_MARK = /\s+\[(\d+|batch \d+)\](?=(\.[^.\s]*)?$)/;

/** `folha [2].csv` -> `folha.csv`; a name without the mark stays as it is. */
export function givenName(fileName: string): string {
  return fileName.replace(FOLDER_MARK, '');
}

/**
 * How a command the tool prints names a batch's file: by its given name, with
 * `--batch N` when another file of that name was beside it as it arrived (its name
 * carries the mark) or waits too (`shared`), so the command picks it and not the other.
 * `hintFlags`: the global flags of the command (` --config "…"`).
 */
export function commandTarget(
  fileName: string,
  batchId: number,
  hintFlags = '',
  shared = false,
): { file: string; hintFlags: string } {
  const file = givenName(fileName);
  return {
    file,
    hintFlags: shared || file !== fileName ? ` --batch ${batchId}${hintFlags}` : hintFlags,
  };
}
