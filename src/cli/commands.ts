// The administration commands of `spatial-hub` next to `serve`: accounts and tokens, on the storage the hub serves from.
import { HubError } from '../core/errors.js';
import { loadConfig } from '../config/config.js';
import { Hub } from '../hub/hub.js';
import { openStorage } from '../storage/open-storage.js';
import { fromStorage } from '../hub/storage-failures.js';

export const COMMANDS_USAGE = `Commands (with the storage options of serve: --storage, --data-dir or their environment variables):
  spatial-hub [serve] [options]                     serve HTTP (the default)
  spatial-hub account add <username> [--admin] [--rights <json>]
  spatial-hub account list
  spatial-hub account passwd <username>
  spatial-hub token create <username> [--urm <json>] [--limits <json>] [--exp <unix seconds>] [--description <text>]
Passwords are read from the environment variable HUB_ACCOUNT_PASSWORD or else from the first line of stdin,
never from the command line (where other users of the machine could see them).`;

/** The flags of the commands themselves, and whether each takes a value; every other flag is a storage option. */
const COMMAND_FLAGS: Record<string, boolean> = { '--admin': false, '--rights': true, '--urm': true, '--limits': true, '--exp': true, '--description': true };

interface Parsed {
  positional: string[];
  flags: Record<string, string | true>;
  configArgs: string[];
}

function parse(argv: string[]): Parsed {
  const parsed: Parsed = { positional: [], flags: {}, configArgs: [] };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    if (flag in COMMAND_FLAGS) {
      if (!COMMAND_FLAGS[flag]) {
        parsed.flags[flag] = true;
        continue;
      }
      const value = inline ?? argv[++i];
      if (value === undefined) throw new UsageError(`Missing value for ${flag}`);
      parsed.flags[flag] = value;
    } else if (flag.startsWith('--')) {
      parsed.configArgs.push(argv[i]);
      if (inline === undefined && i + 1 < argv.length) parsed.configArgs.push(argv[++i]);
    } else {
      parsed.positional.push(argv[i]);
    }
  }
  return parsed;
}

class UsageError extends Error {}

/** An example value of each JSON flag, for the message when one is not JSON. */
const JSON_EXAMPLES: Record<string, string> = {
  '--rights': '{"xyz-hub": {"readFeatures": [{}]}}',
  '--urm': '{"xyz-hub": {"readFeatures": [{}]}}',
  '--limits': '{"maxRequestsPerMinute": 600}',
};

function json(flag: string, value: string | true | undefined): unknown {
  if (typeof value !== 'string') return undefined;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw new UsageError(`${flag} takes JSON, e.g. ${flag} '${JSON_EXAMPLES[flag]}'`);
  }
}

/** The new password: HUB_ACCOUNT_PASSWORD, else the first line of stdin. */
async function readPassword(env: NodeJS.ProcessEnv): Promise<string> {
  const fromEnv = env.HUB_ACCOUNT_PASSWORD;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  if (process.stdin.isTTY) process.stderr.write('Password (one line): ');
  let text = '';
  for await (const chunk of process.stdin) {
    text += (chunk as Buffer).toString('utf8');
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0];
}

export function isCommand(argv: readonly string[]): boolean {
  return argv[0] === 'account' || argv[0] === 'token';
}

async function run(hub: Hub, command: string, parsed: Parsed, env: NodeJS.ProcessEnv): Promise<void> {
  const [username] = parsed.positional;
  const out = (value: unknown) => process.stdout.write(JSON.stringify(value) + '\n');
  const needUser = () => {
    if (username === undefined || parsed.positional.length !== 1) throw new UsageError(`${command} takes one username`);
    return username;
  };
  switch (command) {
    case 'account add': {
      const name = needUser();
      out(await hub.accounts.create({ username: name, password: await readPassword(env), admin: parsed.flags['--admin'] === true, rights: json('--rights', parsed.flags['--rights']) }));
      return;
    }
    case 'account list':
      if (parsed.positional.length !== 0) throw new UsageError('account list takes no arguments');
      for (const account of await hub.accounts.list()) out(account);
      return;
    case 'account passwd': {
      const name = needUser();
      if (!(await hub.accounts.setPassword(name, await readPassword(env)))) throw new UsageError(`No account with the username ${name}`);
      process.stdout.write(`Password of ${name} changed; its sessions ended.\n`);
      return;
    }
    case 'token create': {
      const account = await hub.accounts.byUsername(needUser());
      if (!account) throw new UsageError(`No account with the username ${username}`);
      const body: Record<string, unknown> = {};
      if (parsed.flags['--urm'] !== undefined) body.urm = json('--urm', parsed.flags['--urm']);
      // The Token API's `limits` as it is, so that both ways of creating a token check it alike (token-input.ts).
      if (parsed.flags['--limits'] !== undefined) body.limits = json('--limits', parsed.flags['--limits']);
      const exp = parsed.flags['--exp'];
      if (typeof exp === 'string') body.exp = /^\d+$/.test(exp) ? Number(exp) : exp;
      if (typeof parsed.flags['--description'] === 'string') body.description = parsed.flags['--description'];
      out(await hub.tokens.create(account, body));
      return;
    }
    default:
      throw new UsageError(`Unknown command "${command}"\n${COMMANDS_USAGE}`);
  }
}

/** Runs `account …` or `token …`; returns the exit code (0 done, 2 bad usage or input, 1 anything else). */
export async function runCommand(argv: readonly string[], env: NodeJS.ProcessEnv, version: string): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parse(argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }
  const config = loadConfig(parsed.configArgs, env);
  const storage = await openStorage(config.storage, { pgPoolSize: 1, queryTimeout: config.queryTimeout });
  try {
    const hub = new Hub(storage, { name: 'Spatial Data Hub', version, upSince: Date.now() }, { sessionTtl: config.sessionTtl });
    await run(hub, `${argv[0]} ${argv[1] ?? ''}`.trim(), parsed, env);
    return 0;
  } catch (raised) {
    const error = fromStorage(raised);
    if (error instanceof UsageError || error instanceof HubError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  } finally {
    await storage.close();
  }
}
