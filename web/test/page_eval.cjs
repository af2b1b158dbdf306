// Open a page in headless Chromium (Debian's /usr/bin/chromium through playwright-core: nothing is
// downloaded), wait for the web demo to start, run the body of an async function read from stdin
// in the page and print its result as JSON. Used by tests/viz/test_web_demo.py.
//   node web/test/page_eval.cjs URL [WIDTHxHEIGHT] [SCREENSHOT.png] < body.js
"use strict";
const { chromium } = require("playwright-core");

async function main() {
  const [url, size = "1000x700", shot] = process.argv.slice(2);
  const body = require("fs").readFileSync(0, "utf8");
  const [width, height] = size.split("x").map(Number);
  const browser = await chromium.launch({
    executablePath: process.env.JL_CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const errors = [];
  try {
    const page = await browser.newPage({ viewport: { width, height } });
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    const t0 = Date.now();
    await page.goto(url);
    await page.waitForFunction(() => globalThis.jlDemo && (jlDemo.state.ready || jlDemo.state.error), null, { timeout: 20000, polling: 20 });
    const loadMs = Date.now() - t0;
    const fn = new Function("page", "require", "return (async () => {" + body + "})()");
    // the body runs in the page when it is a string expression; in Node (with `page`) when it starts with //node
    const result = body.startsWith("//node") ? await fn(page, require) : await page.evaluate("(async () => {" + body + "})()");
    if (shot) await page.screenshot({ path: shot });
    process.stdout.write(JSON.stringify({ loadMs, pageError: await page.evaluate(() => jlDemo.state.error), errors, result }));
  } finally {
    await browser.close();
  }
}
main().catch((e) => { process.stderr.write(String(e && e.stack || e) + "\n"); process.exit(1); });
