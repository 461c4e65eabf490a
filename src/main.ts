#!/usr/bin/env node
// Entry point of the hub: reads the configuration, opens storage, ensures the admin account and serves HTTP from this process or its workers (or runs an account or token command).
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import cluster from 'node:cluster';
import type { AdminBootstrap } from './hub/access/access-service.js';
import { WORKER_START, type WorkerStart } from './cluster/messages.js';
import { PACKAGE_ROOT } from './core/package-root.js';

/**
 * The hub's modules, loaded only when this process serves or runs an account or token command: `import` and `export`
 * are HTTP clients and start in a third of the time without them.
 */
async function hubModules() {
  const [config, commands, pool, peers, served, storage] = await Promise.all([
    import('./config/config.js'), import('./cli/commands.js'), import('./cluster/worker-pool.js'),
    import('./cluster/worker-peers.js'), import('./serve.js'), import('./storage/open-storage.js'),
  ]);
  return { ...config, ...commands, ...pool, ...peers, ...served, ...storage };
}

const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };

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

/** A worker of the cluster: the primary did the start-up work, so it opens the storage and serves. */
async function serveAsWorker(): Promise<void> {
  const { hubOf, loadConfig, openStorage, serve, tellPrimary, WorkerPeers } = await hubModules();
  const config = loadConfig(process.argv.slice(2), process.env);
  const start = JSON.parse(process.env[WORKER_START] ?? '{}') as WorkerStart;
  const storage = await openStorage(config.storage, { pgPoolSize: config.pgPoolSize, queryTimeout: config.queryTimeout });
  const peers = new WorkerPeers();
  const port = await serve(hubOf(storage, config, pkg.version, start.upSince, peers), config, start.port, () => peers.nodeMetrics());
  tellPrimary({ type: 'listening', port });
}

/**
 * Serves from this process (HUB_WORKERS=1), or has the workers serve: then this process, the primary, keeps what they
 * share and restarts one that dies (docs/decisions.md, "Every core").
 */
async function main(): Promise<void> {
  if (cluster.isWorker) return serveAsWorker();
  const argv = process.argv.slice(2);
  // import and export are clients of a hub's HTTP API: they need neither its configuration nor its storage.
  if (argv[0] === 'import' || argv[0] === 'export') {
    const { runTransferCommand } = await import('./cli/transfer-commands.js');
    process.exitCode = await runTransferCommand(argv, process.env);
    return;
  }
  // backup and restore copy the storage as it is: they start no hub on it (which would migrate it or create it).
  if (argv[0] === 'backup' || argv[0] === 'restore') {
    const { runBackupCommand } = await import('./cli/backup-commands.js');
    process.exitCode = await runBackupCommand(argv, process.env);
    return;
  }
  const { COMMANDS_USAGE, describeConfig, hubOf, isCommand, loadConfig, openStorage, runCommand, serve, USAGE, WorkerPool } = await hubModules();
  if (argv.includes('--help') || argv.includes('-h')) {
    const [{ TRANSFER_USAGE }, { BACKUP_USAGE }] = await Promise.all([import('./cli/transfer-commands.js'), import('./cli/backup-commands.js')]);
    process.stdout.write(USAGE + '\n\n' + COMMANDS_USAGE + '\n\n' + BACKUP_USAGE + '\n\n' + TRANSFER_USAGE + '\n');
    return;
  }
  if (isCommand(argv)) {
    process.exitCode = await runCommand(argv, process.env, pkg.version);
    return;
  }
  const config = loadConfig(argv, process.env);
  const upSince = Date.now();
  process.stdout.write(`Spatial Data Hub ${pkg.version} configuration: ${JSON.stringify(describeConfig(config))}\n`);
  // Migrations, the durability check and the admin account happen once, here, before any worker starts.
  const storage = await openStorage(config.storage, { pgPoolSize: config.pgPoolSize, queryTimeout: config.queryTimeout });
  // Read back from the engine, so that a weakened setting shows in the log (and fails the durability tests).
  process.stdout.write(`Durability: ${JSON.stringify(await storage.durability())}\n`);
  const hub = hubOf(storage, config, pkg.version, upSince);
  announceAdmin(await hub.access.bootstrapAdmin({
    user: config.adminUser, password: config.adminPassword, token: config.adminToken,
  }), config.dataDir);
  const listening = (port: number) => process.stdout.write(`Listening on http://${config.host}:${port}/hub\n`);
  if (config.workers === 1) {
    listening(await serve(hub, config, config.port));
    return;
  }
  await storage.close();
  const pool = new WorkerPool({ workers: config.workers, port: config.port, upSince, log: (line) => process.stderr.write(`${line}\n`) });
  process.on('SIGINT', () => pool.stop());
  process.on('SIGTERM', () => pool.stop());
  process.exit(await pool.run(listening));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
