#!/usr/bin/env node
// Entry point of the hub: reads the configuration, opens storage, ensures the admin account and serves HTTP (or runs an account or token command).
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeConfig, loadConfig, USAGE } from './config/config.js';
import { Hub } from './hub/hub.js';
import type { AdminBootstrap } from './hub/access/access-service.js';
import { buildServer } from './http/server.js';
import { COMMANDS_USAGE, isCommand, runCommand } from './cli/commands.js';
import { openStorage } from './storage/open-storage.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/**
 * Generated secrets are kept in a file only the owner can read. They are shown once on a terminal only:
 * a stdout that is not one usually ends up in logs (containers, services), where secrets must not go.
 */
function announceAdmin(admin: AdminBootstrap, dataDir: string): void {
  if (!admin.generatedPassword && !admin.generatedToken) return;
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'admin-credentials.json');
  const credentials = { user: admin.user, password: admin.generatedPassword, token: admin.generatedToken };
  writeFileSync(file, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  const shown = process.stdout.isTTY === true;
  process.stdout.write(
    `\nFirst start: created admin account "${admin.user}".\n` +
    (shown && admin.generatedPassword ? `  password: ${admin.generatedPassword}\n` : '') +
    (shown && admin.generatedToken ? `  token:    ${admin.generatedToken}\n` : '') +
    (shown
      ? `These are shown once and saved in ${file} (readable by its owner only).\n\n`
      : `The generated credentials are in ${file} (readable by its owner only).\n\n`));
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE + '\n\n' + COMMANDS_USAGE + '\n');
    return;
  }
  if (isCommand(argv)) {
    process.exitCode = await runCommand(argv, process.env, pkg.version);
    return;
  }
  const config = loadConfig(argv, process.env);
  process.stdout.write(`Spatial Data Hub ${pkg.version} configuration: ${JSON.stringify(describeConfig(config))}\n`);
  const storage = await openStorage(config.storage, { pgPoolSize: config.pgPoolSize, queryTimeout: config.queryTimeout });
  // Read back from the engine, so that a weakened setting shows in the log (and fails the durability tests).
  process.stdout.write(`Durability: ${JSON.stringify(await storage.durability())}\n`);
  const hub = new Hub(storage, { name: 'Spatial Data Hub', version: pkg.version, upSince: Date.now() },
    { statisticsExactLimit: config.statisticsExactLimit, spacePageSize: config.spacePageSize, sessionTtl: config.sessionTtl });
  announceAdmin(await hub.access.bootstrapAdmin({
    user: config.adminUser, password: config.adminPassword, token: config.adminToken,
  }), config.dataDir);

  const app = await buildServer(hub, config);
  const shutdown = async () => {
    await app.close();
    await storage.close();
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  process.stdout.write(`Listening on http://${config.host}:${port}/hub\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
