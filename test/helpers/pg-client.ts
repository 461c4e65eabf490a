// One PostgreSQL connection for the length of some work: for tests and the bench that look into a hub's database.
import pg from 'pg';

export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
