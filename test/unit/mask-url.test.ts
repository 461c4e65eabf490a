// Unit tests for hiding the passwords of storage locations: the password pg would send never shows, whatever characters it holds.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { maskUrl } from '../../src/storage/postgres/mask-url.js';

/** The password pg reads from a connection string (the authority here); undefined when pg cannot read the string. */
function pgPassword(location: string): string | undefined {
  try {
    return new pg.Client({ connectionString: location }).password;
  } catch {
    return undefined;
  }
}

/** Location, what it shows as, and the secret text that must not appear (pg's password, or the raw one pg cannot read). */
const CASES: Array<[string, string, string]> = [
  ['postgres://hub:secret@db.example:5432/hub', 'postgres://hub:***@db.example:5432/hub', 'secret'],
  ['postgres://hub:pa@ss@db.example:5432/hub', 'postgres://hub:***@db.example:5432/hub', 'pa@ss'],
  ['postgres://hub:p@ss@w@rd@db.example/hub', 'postgres://hub:***@db.example/hub', 'p@ss@w@rd'],
  ['postgres://hub:pa:ss@db.example/hub', 'postgres://hub:***@db.example/hub', 'pa:ss'],
  ['postgres://hub:pa%40ss%2Fw%3Ard@db.example/hub', 'postgres://hub:***@db.example/hub', 'pa@ss/w:rd'],
  ['postgresql://:only-password@db.example/hub', 'postgresql://:***@db.example/hub', 'only-password'],
  ['postgres://hub@db.example/hub?password=sec%40ret&sslmode=require', 'postgres://hub@db.example/hub?password=***&sslmode=require', 'sec@ret'],
  ['postgres://hub:pw-host@/hub?host=/run/postgresql', 'postgres://***@/hub?host=/run/postgresql', 'pw-host'],
];

/** Strings pg cannot read: masked between `://` and the last `@`, the raw password gone. */
const UNPARSABLE: Array<[string, string, string]> = [
  ['postgres://hub:pa/ss@db.example/hub', 'postgres://***@db.example/hub', 'pa/ss'],
  ['postgres://hub:pa?ss@db.example/hub', 'postgres://***@db.example/hub', 'pa?ss'],
  ['postgres://hub:pa#ss@db.example/hub', 'postgres://***@db.example/hub', 'pa#ss'],
  ['postgres://hub:x/y@db.example/hub?password=p%40ss', 'postgres://***@db.example/hub?password=***', 'p%40ss'],
];

describe('maskUrl', () => {
  test('hides the password pg reads, with @, :, / or %40 in it, and keeps user, host, port, database and query', () => {
    for (const [location, shown, secret] of CASES) {
      assert.equal(pgPassword(location), secret, `pg reads the password of ${shown} as the case says`);
      assert.equal(maskUrl(location), shown, location);
    }
  });

  test('masks between :// and the last @ when the URL does not parse, as pg cannot read it either', () => {
    for (const [location, shown, secret] of UNPARSABLE) {
      assert.equal(pgPassword(location), undefined, `pg refuses ${shown}`);
      assert.equal(maskUrl(location), shown, location);
      assert.ok(!maskUrl(location).includes(secret));
    }
  });

  test('masks each URL of a comma-separated list', () => {
    assert.equal(maskUrl('postgres://a:one@h1:5432/a,postgres://b:t@o@h2/b'), 'postgres://a:***@h1:5432/a,postgres://b:***@h2/b');
    assert.equal(maskUrl('postgres://a@h1/a,postgres://b:two@h2/b'), 'postgres://a@h1/a,postgres://b:***@h2/b');
  });

  test('a list with a piece that does not parse is masked as one text: no piece of a password split at a comma shows', () => {
    for (const [location, secret] of [
      ['postgres://hub:12,34@db.example/hub', '12,34'],
      ['postgres://hub:pa,ss,x@db.example/hub', 'ss'],
      ['postgres://a:one@h1/a,postgres://b:pa/ss@h2/b', 'pa/ss'],
    ]) {
      const shown = maskUrl(location);
      assert.match(shown, /^postgres:\/\/\*\*\*@(db\.example|h2)\/(hub|b)$/, location);
      for (const part of secret.split(/[,/]/)) assert.ok(!shown.includes(part), `${part} in ${shown}`);
    }
  });

  test('leaves locations without a password as they were written', () => {
    for (const location of ['postgres://hub@db.example:5432/hub', 'sqlite:/var/lib/spatial hub/hub.db', 'sqlite:data/hub.db', './hub.db']) {
      assert.equal(maskUrl(location), location);
    }
  });
});
