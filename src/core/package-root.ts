// The hub's install folder (where its package.json is), found from the running module's place: the same answer from
// tsc's output (dist/src/…) and from the bundle (dist/bundle/…), whose modules sit at different depths.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findPackageRoot(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(folder, 'package.json'))) {
    const parent = dirname(folder);
    if (parent === folder) throw new Error('package.json not found above the hub\'s modules');
    folder = parent;
  }
  return folder;
}

export const PACKAGE_ROOT = findPackageRoot();
