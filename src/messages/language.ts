/**
 * The language of what accountants read (result files in the excel dialect, `validate`'s
 * and `run`'s summaries): the `language` setting, else the locale. Operator logs stay
 * English.
 */
export const LANGUAGES = ['pt-BR', 'en'] as const;
export type Language = (typeof LANGUAGES)[number];

/**
 * The setting, else the locale as POSIX reads it (LC_ALL, then LC_MESSAGES, then LANG):
 * Portuguese for any `pt` locale (`pt_BR.UTF-8`, `pt_PT`), else English. Pure.
 */
export function languageOf(
  setting: Language | null,
  env: Readonly<Record<string, string | undefined>>,
): Language {
  if (setting !== null) return setting;
  const locale = [env['LC_ALL'], env['LC_MESSAGES'], env['LANG']].find(
    (value) => value !== undefined && value !== '',
  );
  return locale !== undefined && /^pt([_.@-]|$)/i.test(locale) ? 'pt-BR' : 'en';
}
