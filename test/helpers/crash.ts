// A crash of a test hub: kill -9, then a new hub on the same data directory (and database), as after a restart by a supervisor.
import { type HubProcess, type StartOptions, startHub } from './hub-process.js';

/** Kills the hub with SIGKILL and starts another on its data; `options` are those the first was started with (env, args). */
export async function crashAndRestart(hub: HubProcess, options: Omit<StartOptions, 'backend' | 'dataDir'> = {}): Promise<HubProcess> {
  await hub.kill();
  return startHub({ ...options, backend: hub.backend, dataDir: hub.dataDir });
}
