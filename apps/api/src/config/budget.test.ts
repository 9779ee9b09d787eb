import { describe, expect, it } from 'vitest';
import { ConfigError } from './error.js';
import { type BudgetSettings, DEFAULT_BUDGETS, readBudgetSettings } from './budget.js';

// Unit tests of API_BUDGET and API_BUDGET_FILE: the budgets' switch and bucket sizes, checked at start-up.

const FILE = '/etc/latchkey/budget.json';
const VALID = {
  guest: { capacity: 100, restorePerSecond: 5 },
  plans: { FREE: { capacity: 1000, restorePerSecond: 50 }, PRO: { capacity: 10_000, restorePerSecond: 500 } },
};

/** The settings read from a file holding `text`. */
function withFile(text: string, value?: string): BudgetSettings {
  return readBudgetSettings(value, FILE, (path) => {
    if (path !== FILE) throw new Error(`unexpected path ${path}`);
    return text;
  });
}

/** `read` must throw a ConfigError whose message has `expected` in it. */
function expectRefusal(read: () => unknown, expected: string): void {
  let caught: unknown;
  try {
    read();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  expect((caught as ConfigError).message).toContain(expected);
}

/** VALID with one change, as the file's text. */
function changed(change: (file: Record<string, any>) => void): string {
  const file = structuredClone(VALID) as Record<string, any>;
  change(file);
  return JSON.stringify(file);
}

describe('API_BUDGET and API_BUDGET_FILE unset', () => {
  it('budgets are on, with the documented default sizes', () => {
    expect(readBudgetSettings(undefined, undefined)).toEqual({
      enabled: true,
      guest: { capacity: 2000, restorePerSecond: 200 },
      plans: { FREE: { capacity: 25_000, restorePerSecond: 2500 }, PRO: { capacity: 100_000, restorePerSecond: 10_000 } },
    });
  });

  it('the settings are copies: changing them leaves DEFAULT_BUDGETS as it was', () => {
    const settings = readBudgetSettings(undefined, undefined);
    settings.plans.FREE.capacity = 1;
    expect(DEFAULT_BUDGETS.plans.FREE.capacity).toBe(25_000);
  });

  it('API_BUDGET=on is the default, said explicitly', () => {
    expect(readBudgetSettings('on', undefined)).toEqual(readBudgetSettings(undefined, undefined));
  });
});

describe('API_BUDGET=off', () => {
  it('switches the budgets off and keeps the sizes', () => {
    expect(readBudgetSettings('off', undefined)).toEqual({ enabled: false, ...DEFAULT_BUDGETS });
  });

  it('a set file is still checked: a fault in it stops start-up even while budgets are off', () => {
    expectRefusal(
      () =>
        withFile(
          changed((file) => (file.plans.FREE.capacity = 0)),
          'off',
        ),
      'plans.FREE.capacity',
    );
  });

  it('a valid file is read even while budgets are off', () => {
    expect(withFile(JSON.stringify(VALID), 'off')).toEqual({ enabled: false, ...VALID });
  });
});

describe('API_BUDGET_FILE sizes every bucket', () => {
  it('a full valid file replaces every default', () => {
    expect(withFile(JSON.stringify(VALID))).toEqual({ enabled: true, ...VALID });
  });

  it('fractional figures are allowed (a slow refill of half a point per second)', () => {
    expect(withFile(changed((file) => (file.guest.restorePerSecond = 0.5))).guest).toEqual({ capacity: 100, restorePerSecond: 0.5 });
  });
});

describe('a bad API_BUDGET_FILE stops start-up with a message naming the key path', () => {
  it.each([
    ['an unknown top-level key', changed((file) => (file.admins = VALID.guest)), 'API_BUDGET_FILE: admins is not a known key'],
    ['an unknown plan', changed((file) => (file.plans.TEAM = VALID.guest)), 'API_BUDGET_FILE: plans.TEAM is not a known key'],
    ['an unknown figure', changed((file) => (file.plans.FREE.burst = 10)), 'API_BUDGET_FILE: plans.FREE.burst is not a known key'],
    ['a missing plans.PRO', changed((file) => delete file.plans.PRO), 'API_BUDGET_FILE: plans.PRO is missing'],
    ['a missing guest', changed((file) => delete file.guest), 'API_BUDGET_FILE: guest is missing'],
    ['a missing capacity', changed((file) => delete file.guest.capacity), 'API_BUDGET_FILE: guest.capacity is missing'],
    ['capacity 0', changed((file) => (file.plans.FREE.capacity = 0)), 'API_BUDGET_FILE: plans.FREE.capacity must be a positive number'],
    [
      'a negative restorePerSecond',
      changed((file) => (file.plans.PRO.restorePerSecond = -5)),
      'API_BUDGET_FILE: plans.PRO.restorePerSecond must be a positive number',
    ],
    ['a figure as a string', changed((file) => (file.guest.capacity = '100')), 'API_BUDGET_FILE: guest.capacity must be a positive number'],
    [
      'a figure too large to be finite',
      JSON.stringify(VALID).replace('"capacity":100,', '"capacity":1e999,'),
      'API_BUDGET_FILE: guest.capacity must be a positive number',
    ],
    ['a plan that is not an object', changed((file) => (file.plans.FREE = 1000)), 'API_BUDGET_FILE: plans.FREE must be an object'],
    ['an array instead of an object', '[]', 'API_BUDGET_FILE: must be a JSON object'],
    ['invalid JSON', '{"guest": {', 'API_BUDGET_FILE: not valid JSON'],
  ])('%s', (_rule, text, expected) => {
    expectRefusal(() => withFile(text), expected);
  });

  it('every fault is named at once, one line each', () => {
    let message = '';
    try {
      withFile(changed((file) => Object.assign(file.guest, { capacity: 0, restorePerSecond: -1 })));
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('guest.capacity must be a positive number');
    expect(message).toContain('guest.restorePerSecond must be a positive number');
  });
});

describe('API_BUDGET_FILE that cannot be read, and API_BUDGET with another value', () => {
  it('an unreadable file stops start-up naming API_BUDGET_FILE and the path', () => {
    const unreadable = () => {
      throw new Error('ENOENT');
    };
    expectRefusal(() => readBudgetSettings(undefined, FILE, unreadable), `API_BUDGET_FILE: cannot read ${FILE}`);
  });

  it('a set file without a reader stops start-up naming API_BUDGET_FILE', () => {
    expectRefusal(() => readBudgetSettings(undefined, FILE), 'API_BUDGET_FILE');
  });

  it('API_BUDGET=maybe stops start-up naming API_BUDGET: only on and off are accepted', () => {
    expectRefusal(() => readBudgetSettings('maybe', undefined), 'API_BUDGET: must be on or off');
  });
});
