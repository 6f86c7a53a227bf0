import { WindowRate } from './window-rate.js';

test('the rate is the last complete window per second; an idle window brings it to 0', () => {
  let now = 1_000_000;
  const r = new WindowRate(() => now, 10_000);
  expect(r.rate('a')).toBe(0);
  r.add('a', 500);
  r.add('a', 500);
  expect(r.rate('a')).toBe(0); // the window is not complete yet
  now += 10_000;
  expect(r.rate('a')).toBe(100);
  r.add('a', 2000);
  r.add('b', 50);
  now += 10_000;
  expect(r.rate('a')).toBe(200);
  expect(r.rate('b')).toBe(5);
  now += 20_000;
  expect(r.rate('a')).toBe(0);
  r.delete((k) => k === 'b');
  expect(r.rate('b')).toBe(0);
});

test('totals count everything added, across windows', () => {
  let now = 0;
  const r = new WindowRate(() => now, 1000);
  r.add('a', 5);
  now += 5000;
  r.add('a', 7);
  r.add('b', 1);
  expect(Object.fromEntries(r.totals())).toEqual({ a: 12, b: 1 });
});
