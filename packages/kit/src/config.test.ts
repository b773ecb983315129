import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, type Env, read, readBaseConfig } from './config.ts';

const defaults = { service: 'scheduler', defaultPort: 9096 };

/** Runs `fn`, asserts it threw a ConfigError, and returns the message. */
function configErrorMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    assert.equal(error.name, 'ConfigError');
    return error.message;
  }
  assert.fail('expected a ConfigError to be thrown');
}

describe('readBaseConfig defaults', () => {
  it('uses the documented defaults for an empty environment', () => {
    assert.deepEqual(readBaseConfig({}, defaults), {
      service: 'scheduler',
      host: '127.0.0.1',
      port: 9096,
      dataDir: '.data/scheduler',
      databaseUrl: undefined,
      logLevel: 'info',
      metricsToken: '',
    });
  });

  it('names the data directory after the service', () => {
    assert.equal(readBaseConfig({}, { service: 'settlement', defaultPort: 1 }).dataDir, '.data/settlement');
  });

  it('treats an empty DATABASE_URL or PORT as unset', () => {
    const config = readBaseConfig({ DATABASE_URL: '', PORT: '' }, defaults);
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.port, 9096);
  });

  it('reads every setting when given', () => {
    const env: Env = {
      HOST: '0.0.0.0',
      PORT: '8080',
      DATA_DIR: '/var/lib/x',
      DATABASE_URL: 'postgres://user:pw@db:5432/app',
      LOG_LEVEL: 'debug',
      PLATFORM_METRICS_TOKEN: 'metrics-bearer',
    };
    assert.deepEqual(readBaseConfig(env, defaults), {
      service: 'scheduler',
      host: '0.0.0.0',
      port: 8080,
      dataDir: '/var/lib/x',
      databaseUrl: 'postgres://user:pw@db:5432/app',
      logLevel: 'debug',
      metricsToken: 'metrics-bearer',
    });
  });

  it('accepts postgresql: as well as postgres: URLs and the port bounds 0 and 65535', () => {
    assert.equal(readBaseConfig({ DATABASE_URL: 'postgresql://db/app' }, defaults).databaseUrl, 'postgresql://db/app');
    assert.equal(readBaseConfig({ PORT: '0' }, defaults).port, 0);
    assert.equal(readBaseConfig({ PORT: '65535' }, defaults).port, 65535);
  });
});

describe('readBaseConfig refuses bad settings with a ConfigError naming the setting', () => {
  const cases: Array<[string, Env, string]> = [
    ['PORT=abc', { PORT: 'abc' }, 'PORT'],
    ['PORT=70000', { PORT: '70000' }, 'PORT'],
    ['PORT=-1', { PORT: '-1' }, 'PORT'],
    ['PORT=80.5', { PORT: '80.5' }, 'PORT'],
    ['LOG_LEVEL=loud', { LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    ['DATABASE_URL=mysql://x', { DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    ['DATABASE_URL=not a url', { DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
  ];
  for (const [name, env, setting] of cases) {
    it(`refuses ${name}`, () => {
      const message = configErrorMessage(() => readBaseConfig(env, defaults));
      assert.ok(message.startsWith(`${setting} `), `message should name ${setting}: ${message}`);
    });
  }

  it('does not echo an unparsable DATABASE_URL, which may carry a password', () => {
    const message = configErrorMessage(() => readBaseConfig({ DATABASE_URL: 'postgres://admin:s3cret@db host:5432/app' }, defaults));
    assert.match(message, /^DATABASE_URL/);
    assert.ok(!message.includes('s3cret'), `message leaks the password: ${message}`);
    assert.ok(!message.includes('admin'), `message leaks the URL: ${message}`);
  });

  it('does not echo a DATABASE_URL with the wrong protocol either', () => {
    const message = configErrorMessage(() => readBaseConfig({ DATABASE_URL: 'mysql://admin:s3cret@db/app' }, defaults));
    assert.match(message, /^DATABASE_URL/);
    assert.ok(!message.includes('s3cret'), `message leaks the password: ${message}`);
  });
});

describe('read.boolean', () => {
  const truthy = ['true', 'TRUE', 'True', '1', 'yes', 'YES', 'Yes'];
  const falsy = ['false', 'FALSE', 'False', '0', 'no', 'NO', 'No'];

  for (const value of truthy) {
    it(`reads "${value}" as true`, () => {
      assert.equal(read.boolean({ FLAG: value }, 'FLAG', false), true);
    });
  }
  for (const value of falsy) {
    it(`reads "${value}" as false`, () => {
      assert.equal(read.boolean({ FLAG: value }, 'FLAG', true), false);
    });
  }

  it('uses the fallback when unset or empty', () => {
    assert.equal(read.boolean({}, 'FLAG', true), true);
    assert.equal(read.boolean({ FLAG: '' }, 'FLAG', false), false);
  });

  it('refuses "maybe" with a ConfigError naming the setting', () => {
    const message = configErrorMessage(() => read.boolean({ FLAG: 'maybe' }, 'FLAG', false));
    assert.match(message, /^FLAG /);
  });

  it('refuses values that merely contain a boolean word', () => {
    configErrorMessage(() => read.boolean({ FLAG: 'yes please' }, 'FLAG', false));
    configErrorMessage(() => read.boolean({ FLAG: '10' }, 'FLAG', false));
  });
});

describe('read.integer', () => {
  it('refuses values outside the range and names the setting', () => {
    assert.match(
      configErrorMessage(() => read.integer({ N: '11' }, 'N', 1, { min: 1, max: 10 })),
      /^N must be an integer from 1 to 10/,
    );
    assert.match(
      configErrorMessage(() => read.integer({ N: '0' }, 'N', 1, { min: 1, max: 10 })),
      /^N /,
    );
  });

  it('reads an in-range value', () => {
    assert.equal(read.integer({ N: '7' }, 'N', 1, { min: 1, max: 10 }), 7);
  });
});

describe('read.duration', () => {
  it('reads the spec’s spellings and bare milliseconds', () => {
    const range = { min: 1, max: 7_200_000 };
    assert.deepEqual(
      ['250ms', '30s', '5m', '1h', '1.5s', '40'].map((value) => read.duration({ D: value }, 'D', '1s', range)),
      [250, 30_000, 300_000, 3_600_000, 1_500, 40],
    );
    assert.equal(read.duration({}, 'D', '30s', range), 30_000);
  });

  it('refuses other spellings and values out of range, naming the setting', () => {
    for (const value of ['30 sec', '-1s', '5d', 'soon', '1e3'])
      assert.match(
        configErrorMessage(() => read.duration({ D: value }, 'D', '1s', { min: 1, max: 60_000 })),
        /^D must be a duration like 250ms, 30s or 5m/,
      );
    assert.match(
      configErrorMessage(() => read.duration({ D: '2m' }, 'D', '1s', { min: 1, max: 60_000 })),
      /from 1 ms to 60000 ms, got "2m"/,
    );
  });
});
