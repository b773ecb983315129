import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/**
 * Debian's Chromium (`apt-get install chromium`), never a browser playwright downloads: `CHROMIUM_PATH` when set (an
 * explicit choice wins), else `chromium` on the PATH, else where Debian puts it.
 */
export const chromiumPath = process.env.CHROMIUM_PATH || chromiumOnPath() || '/usr/bin/chromium';

function chromiumOnPath(): string | undefined {
  try {
    return execFileSync('which', ['chromium'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined;
  } catch {
    return undefined;
  }
}
export const screenshotDir = join(import.meta.dirname, 'screenshots');

export const desktop = { width: 1280, height: 800 };
export const phone = { width: 390, height: 844 };

/**
 * One headless Chromium for a whole test file, in a fresh profile folder, with nothing of its own on the network
 * (no background networking, component updates or sync). With `proxy`, every request (loopback included) goes
 * through it: the tests' network link, which they can cut.
 */
export async function launchBrowser(options: { proxy?: string } = {}): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = await mkdtemp(join(tmpdir(), 'console-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      ...(options.proxy ? [`--proxy-server=${options.proxy}`, '--proxy-bypass-list=<-loopback>'] : []),
    ],
    viewport: desktop,
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Saves a screenshot under test/screenshots (git-ignored), at the page's current size. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true });
  // From the top: a full-page shot of a scrolled page would show the sticky header half way down.
  await page.evaluate('window.scrollTo(0, 0)');
  await page.screenshot({ path: join(screenshotDir, `${name}.png`), fullPage: true });
}

/** Screenshots at desktop and at phone width, then back to desktop. */
export async function screenshotBoth(page: Page, name: string): Promise<void> {
  await page.setViewportSize(desktop);
  await screenshot(page, `${name}-desktop`);
  await page.setViewportSize(phone);
  await screenshot(page, `${name}-phone`);
  await page.setViewportSize(desktop);
}
