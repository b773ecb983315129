import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

/*
 * The colours of both schemes against WCAG 2.2: text AA (4.5:1, 1.4.3) and the edges that identify a control and the
 * focus ring (3:1, 1.4.11), each on the page and on a panel. Read from styles.css, so a colour changed there is checked.
 */

const css = readFileSync(join(import.meta.dirname, '../src/styles.css'), 'utf8');

/** The custom properties of the first `:root` block after `from` in styles.css. */
function scheme(from: number): Map<string, string> {
  const start = css.indexOf(':root {', from);
  const block = css.slice(start, css.indexOf('}', start));
  return new Map([...block.matchAll(/--([a-z-]+):\s*(#[0-9a-f]{6});/gi)].map((match) => [match[1] as string, match[2] as string]));
}

const schemes = { light: scheme(0), dark: scheme(css.indexOf('prefers-color-scheme: dark')) };

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((at) => {
    const channel = Number.parseInt(hex.slice(at, at + 2), 16) / 255;
    return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

describe('the console’s colours', () => {
  for (const [name, colours] of Object.entries(schemes)) {
    const colour = (property: string) => colours.get(property) ?? assert.fail(`--${property} is set in the ${name} scheme`);
    const check = (foreground: string, background: string, minimum: number) => {
      const ratio = contrast(colour(foreground), colour(background));
      assert.ok(ratio >= minimum, `${name}: --${foreground} on --${background} is ${ratio.toFixed(2)}:1, under ${minimum}:1`);
    };

    it(`${name}: text is AA on the page and on panels`, () => {
      for (const text of ['fg', 'muted', 'accent', 'good', 'bad', 'warn']) for (const background of ['bg', 'panel']) check(text, background, 4.5);
      check('accent-fg', 'accent', 4.5);
    });

    it(`${name}: a form control's edge and the focus ring stand out 3:1`, () => {
      for (const edge of ['control-line', 'focus']) for (const background of ['bg', 'panel']) check(edge, background, 3);
    });
  }
});
