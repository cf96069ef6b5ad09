/**
 * Config layers, later ones winning: config/default.json, then the `--config` file,
 * then the environment file (`--settings-file`, `PAYOUTS_SETTINGS_FILE`), then `PAYOUTS_*`
 * environment variables. `resolveConfig` is pure; `loadConfig` reads.
 */
import { readFileSync } from 'node:fs';
import { PayoutsError } from '../errors.js';
import { FAILPOINT_VARIABLE } from '../runtime/failpoint.js';
import { CONFIG_KEYS, ConfigSchema, envName, type Config, type ConfigKey } from './schema.js';
import { nearestOf } from '../csv/near-miss.js';
import { isPostgresUrl, postgresAddress } from '../journal/location.js';
import { ENV_FILE_VARIABLE, readEnvFileText, type EnvFileSettings } from './env-file.js';

export interface ConfigLayer {
  /** Where the values came from, e.g. `config/default.json` or `--config prod.json`. */
  source: string;
  values: Readonly<Record<string, unknown>>;
  /** Names the source of one key, when it differs per key (environment variables). */
  sourceOf?: (key: string) => string;
}

export class ConfigError extends PayoutsError {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super('config', problems.map((p) => `config: ${p}`).join('\n'));
  }
}

// A mistaken `authScheme: "Bearer <token>"` would carry the token, and a mistyped journal
// URL its password: never echo any of them.
const SECRET_KEYS = new Set(['token', 'authScheme', 'journal']);

function shown(key: string, value: unknown): string {
  return SECRET_KEYS.has(key) ? '' : ` = ${displayed(key, value)}`;
}

/**
 * A value as it may be shown to a person: JSON, with the token hidden, an authScheme
 * shown only when it is a scheme's name, and a password in an address starred.
 */
export function displayed(key: string, value: unknown): string {
  if (key === 'token' && value !== null) return '(set, hidden)';
  if (key === 'authScheme' && !/^(|Bearer|Basic|Token|Bot)$/i.test(String(value)))
    return '(set, hidden)';
  if (key === 'journal' && typeof value === 'string')
    return isPostgresUrl(value) ? JSON.stringify(postgresAddress(value)) : '(set, hidden)';
  const text = JSON.stringify(value) ?? 'missing';
  // user:password@ in an address is a credential too.
  return text.replace(/\/\/[^/@"]*@/, '//***@');
}
const KNOWN = new Set<string>(CONFIG_KEYS);

export function resolveConfig(
  layers: readonly ConfigLayer[],
  readToken?: (tokenFile: string) => string,
): Config {
  return resolveWithSources(layers, readToken).config;
}

/** The config, and where each key's value came from (`config/default.json`, `PAYOUTS_HOME`). */
export interface SourcedConfig {
  config: Config;
  sources: Readonly<Record<ConfigKey, string>>;
  /** The environment file read, when one was named. */
  envFile?: { path: string; settings: EnvFileSettings };
}

/**
 * `readToken` reads the `tokenFile`; without it (a command that reaches no gateway) the
 * file is left unread, and the token stays null.
 */
function resolveWithSources(
  layers: readonly ConfigLayer[],
  readToken?: (tokenFile: string) => string,
): SourcedConfig {
  const problems: string[] = [];
  const merged: Record<string, unknown> = {};
  const origin: Record<string, string> = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer.values)) {
      const source = layer.sourceOf?.(key) ?? layer.source;
      if (!KNOWN.has(key)) {
        const meant = key.startsWith('PAYOUTS_')
          ? nearestOf(key, CONFIG_KEYS.map(envName))
          : nearestOf(key, CONFIG_KEYS);
        const guess = meant === undefined ? '' : `; did you mean ${meant}?`;
        problems.push(
          `unknown key "${key}" in ${source}${guess}; known keys: ${CONFIG_KEYS.join(', ')}`,
        );
        continue;
      }
      merged[key] = value;
      origin[key] = source;
    }
  }
  const parsed = ConfigSchema.safeParse(merged);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = String(issue.path[0] ?? '(config)');
      problems.push(
        `${key}${shown(key, merged[key])} (from ${origin[key] ?? 'nowhere'}): ${issue.message}`,
      );
    }
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  const config = parsed.data;
  if (config.tokenFile !== null && config.token !== null) {
    // Two tokens, and a person must say which one pays.
    throw new ConfigError([
      `token (from ${origin['token'] ?? 'nowhere'}) and tokenFile (from ${origin['tokenFile'] ?? 'nowhere'}) are both set: keep the token in the tokenFile alone, and remove ${envName('token')}`,
    ]);
  }
  if (config.tokenFile !== null && readToken !== undefined) {
    config.token = readToken(config.tokenFile);
    origin['token'] = `tokenFile ${config.tokenFile}`;
  }
  if (config.baseUrl !== null && config.token === null && config.tokenFile === null) {
    throw new ConfigError([
      `token is required when baseUrl is set (set ${envName('tokenFile')} to a file holding it, ${envName('token')}, or "token" in the --config file)`,
    ]);
  }
  if (config.gateway === 'sandbox' && config.baseUrl !== null) {
    // Which of the two was meant cannot be guessed, and one guess pays nobody.
    throw new ConfigError([
      `gateway is "sandbox" (from ${origin['gateway'] ?? 'nowhere'}), which runs against the embedded sandbox, but baseUrl is set too (from ${origin['baseUrl'] ?? 'nowhere'}): remove one of them`,
    ]);
  }
  const unreachable = unreachablePostback(config);
  if (unreachable !== undefined) throw new ConfigError([unreachable]);
  return { config, sources: origin as Record<ConfigKey, string> };
}

/** Loopback and "any address": what a gateway on another machine cannot call back. */
function isLocalHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return (
    bare === 'localhost' ||
    bare === '::1' ||
    bare === '::' ||
    bare === '0.0.0.0' ||
    bare.startsWith('127.')
  );
}

/**
 * The postback address the gateway is given must be one it can call: a gateway on
 * another machine given `http://127.0.0.1:8787/…` would post into its own loopback, and
 * every postback would be lost without a word (polling still follows each payout).
 */
function unreachablePostback(config: Config): string | undefined {
  if (config.postbackListen === null || config.baseUrl === null) return undefined;
  const gatewayHost = new URL(config.baseUrl).hostname;
  if (isLocalHost(gatewayHost)) return undefined;
  const [key, address, host] =
    config.postbackPublicUrl === null
      ? ['postbackListen', config.postbackListen, config.postbackListen.replace(/:\d+$/, '')]
      : ['postbackPublicUrl', config.postbackPublicUrl, new URL(config.postbackPublicUrl).hostname];
  if (!isLocalHost(host)) return undefined;
  return `${key} ${address} is an address the gateway at ${gatewayHost} cannot reach: set postbackPublicUrl to the address it reaches the receiver at (your proxy's, say https://payouts.example.com), or set postbackListen to null to follow payouts by polling alone`;
}

/**
 * Environment variables as a layer. Text that the key's schema takes is kept as text;
 * otherwise it is read as JSON (`16`, `null`). An empty variable counts as unset.
 * `placeOf` names where a variable was set (a line of the environment file).
 */
export function envLayer(
  env: Readonly<Record<string, string | undefined>>,
  placeOf?: (name: string) => string,
): ConfigLayer {
  const byEnvName = new Map(CONFIG_KEYS.map((key) => [envName(key), key]));
  const values: Record<string, unknown> = {};
  const names: Record<string, string> = {};
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith('PAYOUTS_') || raw === undefined || raw === '') continue;
    if (name === FAILPOINT_VARIABLE || name === ENV_FILE_VARIABLE) continue;
    const key = byEnvName.get(name);
    if (key === undefined) {
      // Reported as an unknown key: a misspelt variable must not pass silently.
      values[name] = raw;
      names[name] = placeOf?.(name) ?? `the environment variable ${name}`;
      continue;
    }
    values[key] = fromEnvText(key, raw);
    names[key] = placeOf?.(name) ?? name;
  }
  return { source: 'the environment', values, sourceOf: (key) => names[key] ?? 'the environment' };
}

function fromEnvText(key: keyof typeof ConfigSchema.shape, raw: string): unknown {
  if (ConfigSchema.shape[key].safeParse(raw).success) return raw;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

const DEFAULTS_FILE = new URL('../../config/default.json', import.meta.url);

export function loadConfig(options: {
  configFile?: string | undefined;
  /** The environment file; the real environment wins over it. */
  envFile?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  /** False for a command that reaches no gateway: the tokenFile is left unread. */
  readsToken?: boolean;
}): SourcedConfig {
  const layers: ConfigLayer[] = [
    { source: 'config/default.json', values: readJson(DEFAULTS_FILE) },
  ];
  if (options.configFile !== undefined) {
    layers.push({ source: `--config ${options.configFile}`, values: readJson(options.configFile) });
  }
  const envFile = options.envFile === undefined ? undefined : readEnvFile(options.envFile);
  if (envFile !== undefined) {
    const { values, lineOf } = envFile.settings;
    layers.push(envLayer(values, (name) => `${envFile.path} line ${lineOf[name]}`));
  }
  layers.push(envLayer(options.env));
  const readToken = options.readsToken === false ? undefined : readTokenFile;
  return {
    ...resolveWithSources(layers, readToken),
    ...(envFile === undefined ? {} : { envFile }),
  };
}

/** A settings file's text, or a ConfigError saying `cannot` with the system's code. */
function readSettingsText(path: string, cannot: (code: string) => string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError([cannot((error as NodeJS.ErrnoException).code ?? 'error')]);
  }
}

function readTokenFile(path: string): string {
  const text = readSettingsText(
    path,
    (code) =>
      `cannot read the token file ${path} (${code}), named by tokenFile: the user running payouts must read it (root:payouts 0640 on a server). Nothing was done`,
  );
  const token = tokenOfFileText(text);
  if (token === undefined) {
    throw new ConfigError([
      `the token file ${path} must hold the token alone, on one line of visible characters (no name=, no quotes, no spaces)`,
    ]);
  }
  return token;
}

/** The token a token file holds: its one line, or undefined when it holds anything else. */
export function tokenOfFileText(text: string): string | undefined {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== '');
  if (lines.length !== 1) return undefined;
  const token = (lines[0] as string).trim();
  // A line copied from the environment file would be sent as the token, and refused.
  if (token.startsWith(`${envName('token')}=`)) return undefined;
  return ConfigSchema.shape.token.safeParse(token).success ? token : undefined;
}

function readEnvFile(path: string): { path: string; settings: EnvFileSettings } {
  const text = readSettingsText(
    path,
    (code) =>
      `cannot open the environment file ${path} (${code}): check the path given by --settings-file or ${ENV_FILE_VARIABLE}, and that the user running payouts may read it. Nothing was done`,
  );
  const reading = readEnvFileText(text);
  if (!reading.ok) throw new ConfigError(reading.problems.map((problem) => `${path} ${problem}`));
  return { path, settings: reading.settings };
}

function readJson(file: string | URL): Record<string, unknown> {
  const name = file instanceof URL ? file.pathname : file;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new ConfigError([`cannot read ${name} (${code})`]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError([`${name} is not valid JSON: ${(error as Error).message}`]);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError([`${name} must hold a JSON object of keys and values`]);
  }
  return value as Record<string, unknown>;
}
