// SPDX-License-Identifier: GPL-2.0-or-later
// The web dashboard in a real browser (tests/integration/test_sandbox_ui_browser.sh):
// Debian's chromium, headless, driven by playwright-core.
//
//   node ui_browser.js URL SANDBOX EVIL_URL ARTIFACT_DIR [OVERLAY]
//
// URL: the dashboard's one-time URL; SANDBOX: a sandbox with a pending
// request; EVIL_URL: a page of another origin (another loopback port)
// that tries to read the stream and to answer. Prints one JSON object
// with what happened; screenshots into ARTIFACT_DIR. OVERLAY: an
// --overlay sandbox whose change is looked at and committed.
// Environment: AR_WS (the sandbox's workspace: go2 there makes the agent
// ask again), AGENTRUN and AR_ROOT (a live grant from the CLI), UI_TOKEN
// (a --secret's value, never in the page).
'use strict';

const fs = require('fs');
const { execFileSync } = require('child_process');
const { chromium } = require('playwright-core');

const [url, sandbox, evilUrl, artifacts, overlay] = process.argv.slice(2);
const out = {};

function step(name) {
  process.stderr.write(`# ${name}\n`);
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--no-proxy-server'],
  });
  try {
    const ctx = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await ctx.newPage();
    const row = `#requests tr[data-sandbox="${sandbox}"]`;

    step('open the URL');
    await page.goto(url);
    out.url_after_login = page.url();
    out.cookie = (await ctx.cookies()).map((c) => ({
      name: c.name, httpOnly: c.httpOnly, sameSite: c.sameSite,
    }));
    step('see the pending request');
    await page.waitForSelector(row, { timeout: 15000 });
    await page.waitForSelector('#status:text("live")', { timeout: 15000 });
    out.row_text = await page.textContent(row);
    // the process that asks: its executable's name and an argument are
    // HTML; shown as text, no element of theirs, nothing of them ran
    await page.waitForSelector(`${row} td.process .exe`, { timeout: 15000 });
    out.process_text = await page.textContent(`${row} td.process`);
    out.injected = await page.evaluate(() => ({
      pwned: window.pwned === undefined ? null : window.pwned,
      elements: document.querySelectorAll('main img, main script').length,
    }));
    await page.screenshot({ path: `${artifacts}/1-pending.png`, fullPage: true });

    step('a page of another origin in the same browser');
    const evil = await ctx.newPage();
    await evil.goto(evilUrl);
    await evil.waitForFunction(() => window.done === true, null, { timeout: 20000 });
    out.evil = await evil.evaluate(() => window.results);
    await evil.screenshot({ path: `${artifacts}/2-other-origin.png`, fullPage: true });
    await evil.close();

    step('the request is still pending');
    await page.reload();
    await page.waitForSelector(row, { timeout: 15000 });
    out.pending_after_evil = true;

    step('click the grant');
    await page.click(`${row} button[data-answer="once"]`);
    await page.waitForSelector(row, { state: 'detached', timeout: 15000 });
    await page.waitForSelector('#answer-result:text("once")', { timeout: 15000 });
    out.answer_result = await page.textContent('#answer-result');
    // the stream shows the answer
    await page.waitForSelector('#events li:text("interface=web")', { timeout: 15000 });
    out.events_text = await page.textContent('#events');
    await page.screenshot({ path: `${artifacts}/3-answered.png`, fullPage: true });

    step('the policy of the sandbox');
    await page.click(`#sandboxes button:text("${sandbox}")`);
    await page.waitForSelector('#policy-mounts tbody tr', { timeout: 15000 });
    await page.waitForSelector('#policy-net tr:has-text("allowed.example")', { timeout: 15000 });
    // from here on, no reload: what changes comes through the stream
    await page.evaluate(() => { window.noReload = true; });

    step('a second request answered `session`: in the policy, live');
    fs.writeFileSync(`${process.env.AR_WS}/go2`, '');
    await page.waitForSelector(row, { timeout: 15000 });
    await page.click(`${row} button[data-answer="session"]`);
    await page.waitForSelector('#policy-net tr:has-text("answer by uid")', { timeout: 15000 });

    step('a live grant from the CLI: in the policy, live');
    execFileSync(process.env.AGENTRUN, ['--root', process.env.AR_ROOT, 'sandbox', 'allow',
      sandbox, '--net', 'granted.example:443'], { stdio: 'ignore', timeout: 20000 });
    await page.waitForSelector('#policy-net tr:has-text("granted.example:443")', { timeout: 15000 });
    out.no_reload = await page.evaluate(() => window.noReload === true);
    out.policy_text = await page.textContent('#policy');
    out.token_in_page = (await page.content()).includes(process.env.UI_TOKEN);
    await page.screenshot({ path: `${artifacts}/4-policy.png`, fullPage: true });

    if (overlay) {
      step('an overlay: its changes, a diff, commit');
      await page.click(`#overlay-actions button:text("changes of ${overlay}")`);
      await page.waitForSelector('#changes .change button', { timeout: 15000 });
      out.changes_text = await page.textContent('#changes');
      await page.click('#changes .change button');
      await page.waitForSelector('#diff:not([hidden])', { timeout: 15000 });
      await page.waitForFunction(() => document.getElementById('diff').textContent.includes('+'), null, { timeout: 15000 });
      out.diff_text = await page.textContent('#diff');
      await page.screenshot({ path: `${artifacts}/5-overlay-diff.png`, fullPage: true });
      page.once('dialog', (d) => d.accept());
      await page.click('#changes button:text("commit")');
      await page.waitForSelector('#changes pre', { timeout: 15000 });
      out.commit_text = await page.textContent('#changes pre');
      await page.screenshot({ path: `${artifacts}/6-overlay-committed.png`, fullPage: true });
    }
    out.ok = true;
  } catch (e) {
    out.ok = false;
    out.error = String(e && e.stack || e);
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out) + '\n');
})();
