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
  const locale = localeOf(env);
  return locale !== undefined && /^pt([_.@-]|$)/i.test(locale.value) ? 'pt-BR' : 'en';
}

/**
 * Where a language taken from the locale came from, as `payouts doctor` names a source:
 * `the locale (LANG=pt_BR.UTF-8)`, or that none is set (cron's bare environment).
 */
export function localeSource(env: Readonly<Record<string, string | undefined>>): string {
  const locale = localeOf(env);
  return locale === undefined
    ? 'no locale set (LC_ALL, LC_MESSAGES, LANG): English'
    : `the locale (${locale.name}=${locale.value})`;
}

function localeOf(
  env: Readonly<Record<string, string | undefined>>,
): { name: string; value: string } | undefined {
  for (const name of ['LC_ALL', 'LC_MESSAGES', 'LANG']) {
    const value = env[name];
    if (value !== undefined && value !== '') return { name, value };
  }
  return undefined;
}
