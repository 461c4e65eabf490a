// Applies versioned schema migrations, one implementation for both engines: each step in its own transaction.

/** A part of the schema with its own version: each entry moves it one version up. */
export interface SchemaComponent {
  name: string;
  migrations: readonly string[];
}

/** How an engine reads a component's version and applies one step (the SQL and the new version in one transaction). */
export interface SchemaAccess {
  version(component: SchemaComponent): Promise<number>;
  apply(component: SchemaComponent, sql: string, version: number): Promise<void>;
}

/** Brings a component up to date; a schema newer than this hub knows is refused, never run on. */
export async function migrate(component: SchemaComponent, access: SchemaAccess): Promise<void> {
  const current = await access.version(component);
  const known = component.migrations.length;
  if (current > known) {
    throw new Error(`The ${component.name} schema is at version ${current}, newer than this hub knows (${known}): upgrade the hub.`);
  }
  for (let version = current; version < known; version++) {
    await access.apply(component, component.migrations[version], version + 1);
  }
}
