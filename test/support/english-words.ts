/**
 * Whether a line a Portuguese reader gets still speaks English: the common English words
 * it holds outside what is data (commands, flags, quoted text, file and folder names,
 * orderIds, setting names, and the names a test gives). Pure, for no-english.test.ts.
 */

/** Common English words that are no Portuguese word (not `a`, `as`, `do`, `for`, `no`, `real`, `total`). */
const ENGLISH = new Set(
  (
    'the is are was were be been it its this that these those of to by with and or not on in at ' +
    'from into has have had will would when once then than also only again yet still new next ' +
    'every each any all none nothing file files row rows line lines payout payouts payment ' +
    'payments batch paid held sent send sends never waiting released approved rejected turned ' +
    'down balance taken over covered retried empty inbox result results run runs stopped early ' +
    'queued asked approval which who what why you your there they them their does did can ' +
    'cannot must should here now until while because after before failed refunded canceled ' +
    'returned money moved reason fix drop move linked copy corrected due besides identical'
  ).split(' '),
);

/** A command as written for a person to run: `payouts approve "folha.csv" --new-batch 3`. */
const COMMAND =
  /\bpayouts [a-z-]+(?:\s+(?:"[^"]*"|--?[\w-]+(?:=\S+)?|[\w.:#-]*\d[\w.:#-]*|\S+\.csv))*/g;
/** Spans that are data whole: `code`, "quoted". */
const QUOTED = /`[^`]*`|"[^"]*"/g;
/** A token that is data: a path, a file or folder name, an orderId, a number, a setting name. */
const DATA_TOKEN = /[/.@\d_-]|[a-z][A-Z]/;
const EDGE_PUNCTUATION = /^[([{'«]+|[)\]}'».,;:!?…]+$/g;

/** The English words of `line` outside its data, lower-cased, in order; [] when none. */
export function englishWordsIn(line: string, data: readonly string[] = []): string[] {
  let text = line;
  for (const value of data) text = text.split(value).join(' ');
  text = text.replace(COMMAND, ' ').replace(QUOTED, ' ');
  return text
    .split(/\s+/)
    .map((token) => token.replace(EDGE_PUNCTUATION, ''))
    .filter((token) => token !== '' && !DATA_TOKEN.test(token))
    .map((token) => token.toLowerCase())
    .filter((word) => ENGLISH.has(word));
}
