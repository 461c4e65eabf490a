// `spatial-hub import` and `spatial-hub export`: argument parsing and exit codes; the work is in src/transfer/, a client of any hub's HTTP API.
import { formatNamed, formatOfName, MAX_ROW_GROUP, WRITERS } from '../transfer/formats/format-registry.js';
import { runExport } from '../transfer/export-run.js';
import { DEFAULT_RETRY, HubClient, HubRequestError } from '../transfer/hub-client.js';
import { runImport } from '../transfer/import-run.js';
import { InputError } from '../transfer/transfer-feature.js';

export const TRANSFER_USAGE = `Loading and saving files (a client of the HTTP API of any hub: --url, default $HUB_URL or http://localhost:8080;
the token from --token or, better, $HUB_TOKEN, never printed):
  spatial-hub import FILE|- --space ID [--create "title"] [--format F] [--id-property NAME] [--tags a,b]
                    [--chunk 5000] [--parallel 4] [--on-error stop|skip] [--resume] [--checkpoint PATH]
                    [--lon COL --lat COL | --wkt COL] [--layer NAME]
  spatial-hub export --space ID [--format F] [--output FILE] [--bbox w,s,e,n] [--tags a,b] [--version N] [--chunk 5000]
                    [--row-group-size 50000] (GeoParquet: rows per row group)
  formats (in and out): ${Object.keys(WRITERS).join(', ')}
  --progress-interval SECONDS (JSON progress lines when stderr is no terminal, default 10); --retries N, --retry-delay MS.
Exit codes: 0 done, 1 the hub failed or could not be reached, 2 bad usage or input (or refused by the hub), 130 interrupted.`;

const VALUE_FLAGS = new Set(['--space', '--create', '--url', '--token', '--format', '--id-property', '--tags', '--chunk', '--parallel', '--on-error',
  '--checkpoint', '--lon', '--lat', '--wkt', '--layer', '--progress-interval', '--retries', '--retry-delay', '--output', '--bbox', '--version', '--row-group-size']);
const SWITCHES = new Set(['--resume']);

class UsageError extends Error {}

function parse(argv: readonly string[]): { positional: string[]; flags: Map<string, string> } {
  const positional: string[] = [];
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    if (SWITCHES.has(flag)) flags.set(flag, 'true');
    else if (VALUE_FLAGS.has(flag)) {
      const value = inline ?? argv[++i];
      if (value === undefined) throw new UsageError(`missing value for ${flag}`);
      flags.set(flag, value);
    } else if (flag.startsWith('--')) throw new UsageError(`unknown option ${flag}`);
    else positional.push(argv[i]);
  }
  return { positional, flags };
}

function whole(flags: Map<string, string>, flag: string, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  const text = flags.get(flag);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new UsageError(`${flag} takes a whole number of at least ${min}${max < Number.MAX_SAFE_INTEGER ? ` and at most ${max}` : ''}, not "${text}"`);
  }
  return value;
}

function clientOf(flags: Map<string, string>, env: NodeJS.ProcessEnv): HubClient {
  const url = flags.get('--url') ?? env.HUB_URL ?? 'http://localhost:8080';
  if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError(`--url must be an http(s) URL of a hub, e.g. http://localhost:8080`);
  return new HubClient(url, flags.get('--token') ?? env.HUB_TOKEN, {
    ...DEFAULT_RETRY, retries: whole(flags, '--retries', DEFAULT_RETRY.retries, 0), baseDelayMs: whole(flags, '--retry-delay', DEFAULT_RETRY.baseDelayMs, 0),
  });
}

function space(flags: Map<string, string>): string {
  const id = flags.get('--space');
  if (id === undefined || id === '') throw new UsageError('--space ID is required');
  return id;
}

function bboxOf(text: string | undefined): [number, number, number, number] | undefined {
  if (text === undefined) return undefined;
  const values = text.split(',').map(Number);
  if (values.length !== 4 || !values.every(Number.isFinite)) throw new UsageError(`--bbox takes west,south,east,north in degrees, not "${text}"`);
  return values as [number, number, number, number];
}

async function importCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { positional, flags } = parse(argv);
  if (positional.length !== 1) throw new UsageError('import takes one FILE (or - for stdin)');
  const formatFlag = flags.get('--format');
  const format = formatFlag === undefined ? undefined : formatNamed(formatFlag);
  if (formatFlag !== undefined && format === undefined) throw new UsageError(`unknown --format "${formatFlag}"`);
  const onError = flags.get('--on-error') ?? 'stop';
  if (onError !== 'stop' && onError !== 'skip') throw new UsageError(`--on-error takes stop or skip, not "${onError}"`);
  const result = await runImport({
    input: positional[0], space: space(flags), create: flags.get('--create'), format,
    reader: { idProperty: flags.get('--id-property'), lon: flags.get('--lon'), lat: flags.get('--lat'), wkt: flags.get('--wkt'), layer: flags.get('--layer') },
    tags: flags.get('--tags'), chunk: whole(flags, '--chunk', 5000), parallel: whole(flags, '--parallel', 4), onError,
    resume: flags.has('--resume'), checkpoint: flags.get('--checkpoint'),
    progressIntervalMs: whole(flags, '--progress-interval', 10) * 1000, client: clientOf(flags, env),
  });
  if (result.message !== undefined) process.stderr.write(`spatial-hub import: ${result.message}\n`);
  return result.exitCode;
}

async function exportCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { positional, flags } = parse(argv);
  if (positional.length !== 0) throw new UsageError('export takes no FILE: give --output FILE or redirect stdout');
  const output = flags.get('--output');
  const formatFlag = flags.get('--format');
  const format = formatFlag !== undefined ? formatNamed(formatFlag) : (output !== undefined ? formatOfName(output) : undefined) ?? 'geojson';
  if (format === undefined) throw new UsageError(`cannot export as "${formatFlag ?? output}": the formats out are ${Object.keys(WRITERS).join(', ')}`);
  const version = flags.get('--version');
  if (version !== undefined && !/^\d+$/.test(version)) throw new UsageError(`--version takes a version number, not "${version}"`);
  if (flags.has('--row-group-size') && format !== 'geoparquet') throw new UsageError(`--row-group-size is for GeoParquet; this export writes ${format}`);
  const rowGroupSize = flags.has('--row-group-size') ? whole(flags, '--row-group-size', 0, 1, MAX_ROW_GROUP) : undefined;
  await runExport({
    space: space(flags), format, bbox: bboxOf(flags.get('--bbox')), tags: flags.get('--tags'), version,
    chunk: whole(flags, '--chunk', 5000), rowGroupSize, output, progressIntervalMs: whole(flags, '--progress-interval', 10) * 1000, client: clientOf(flags, env),
  });
  return 0;
}

/** Runs `import …` or `export …`; returns the exit code. */
export async function runTransferCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(TRANSFER_USAGE + '\n');
    return 0;
  }
  try {
    return argv[0] === 'import' ? await importCommand(argv.slice(1), env) : await exportCommand(argv.slice(1), env);
  } catch (error) {
    if (error instanceof UsageError || error instanceof InputError) {
      process.stderr.write(`spatial-hub ${argv[0]}: ${error.message}\n`);
      return 2;
    }
    if (error instanceof HubRequestError) {
      process.stderr.write(`spatial-hub ${argv[0]}: ${error.message}\n`);
      return error.status !== undefined && error.status < 500 && error.status !== 429 ? 2 : 1;
    }
    throw error;
  }
}
