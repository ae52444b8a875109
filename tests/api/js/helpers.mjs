// What every masto.js scenario shares: the site it talks to (from the environment
// the pytest side sets), masto's clients, signing in as a browser would, and one
// JSON report on stdout for the pytest side to check against the site's own answers.
import { readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { createOAuthAPIClient, createRestAPIClient } from "masto";

export const OOB = "urn:ietf:wg:oauth:2.0:oob";

/** An environment variable the pytest side must set. */
export function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this through tests/api/test_masto_js.py`);
  return value;
}

export const baseUrl = () => required("FEED_BASE_URL");

/** masto's REST client for the site, with a token or without one. */
export function rest(accessToken) {
  return createRestAPIClient({ url: baseUrl(), accessToken });
}

/** masto's OAuth client (/oauth/token, /oauth/revoke). */
export function oauth() {
  return createOAuthAPIClient({ url: baseUrl() });
}

/** Registers an app as an app does at first start. */
export async function registerApp(name, scopes) {
  return rest().v1.apps.create({ clientName: name, redirectUris: OOB, scopes });
}

/** Ends a token as an app's "log out" does (POST /oauth/revoke). */
export async function revokeToken(app, token) {
  await oauth().revoke({ clientId: app.clientId, clientSecret: app.clientSecret, token });
}

/** A token by the password grant (username or e-mail). */
export async function signInByPassword(app, username, password, scopes) {
  const token = await oauth().token.create({
    grantType: "password",
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    redirectUri: OOB,
    username,
    password,
    scope: scopes,
  });
  return token.accessToken;
}

function base64url(bytes) {
  return Buffer.from(bytes).toString("base64").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A PKCE verifier and its S256 challenge. */
export async function pkce() {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(48)));
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return { verifier, challenge: base64url(new Uint8Array(digest)) };
}

/** A browser's cookie jar over fetch: redirects followed by hand so that each hop's
 * cookies (the session, CSRF) are kept, as a browser keeps them. */
export function browser() {
  const jar = new Map();
  async function go(url, init = {}) {
    let target = new URL(url, baseUrl());
    let request = init;
    for (let hop = 0; hop < 10; hop += 1) {
      const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
      const response = await fetch(target, {
        ...request,
        redirect: "manual",
        headers: { ...(request.headers ?? {}), cookie, referer: target.href },
      });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(";");
        const at = pair.indexOf("=");
        jar.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
      }
      const location = response.headers.get("location");
      if (response.status < 300 || response.status >= 400 || !location) {
        return { url: target.href, status: response.status, text: await response.text() };
      }
      target = new URL(location, target);
      request = {};
    }
    throw new Error(`too many redirects from ${url}`);
  }
  return { go };
}

const unescape = (value) => value.replace(/&amp;/g, "&").replace(/&quot;/g, '"');

function hiddenFields(html) {
  const fields = {};
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="(\w+)" value="([^"]*)"/g)) {
    fields[name] = unescape(value);
  }
  return fields;
}

/** What a person does in the browser: open the authorize URL, log in, allow, and read
 * the code the out-of-band page shows. */
export async function codeByConsent(app, username, password, scopes, extra = {}) {
  const page = browser();
  const query = new URLSearchParams({
    client_id: app.clientId,
    redirect_uri: OOB,
    response_type: "code",
    scope: scopes,
    ...extra,
  });
  const login = await page.go(`/oauth/authorize?${query}`);
  if (!login.url.includes("/accounts/login/")) throw new Error(`no log-in page: ${login.url}`);
  const csrf = login.text.match(/name="csrfmiddlewaretoken" value="([^"]+)"/)[1];
  const next = unescape(login.text.match(/name="next" value="([^"]+)"/)[1]);
  const consent = await page.go(login.url, {
    method: "POST",
    body: new URLSearchParams({ csrfmiddlewaretoken: csrf, username, password, next }),
  });
  if (!consent.text.includes("authorization-form")) {
    throw new Error(`no consent page (${consent.status}): ${consent.text.slice(0, 300)}`);
  }
  const shown = await page.go("/oauth/authorize", {
    method: "POST",
    body: new URLSearchParams({ ...hiddenFields(consent.text), allow: "Authorize" }),
  });
  const code = shown.text.match(/value="([^"]+)" id="authorization-code"/);
  if (!code) throw new Error(`no code shown (${shown.status}): ${shown.text.slice(0, 300)}`);
  return unescape(code[1]);
}

/** A token by the code flow, with PKCE (S256) as browser and phone apps send it. */
export async function signInByCode(app, username, password, scopes) {
  const { verifier, challenge } = await pkce();
  const code = await codeByConsent(app, username, password, scopes, {
    code_challenge: challenge,
    code_challenge_method: "S256",
  });
  const token = await oauth().token.create({
    grantType: "authorization_code",
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    redirectUri: OOB,
    code,
    codeVerifier: verifier,
    scope: scopes,
  });
  return { accessToken: token.accessToken, scope: token.scope };
}

/** Every page of a masto paginator, each as its status ids. */
export async function pagesOf(paginator) {
  const pages = [];
  for await (const page of paginator) {
    if (page.length === 0) break;
    pages.push(page.map((status) => status.id));
  }
  return pages;
}

/** The HTTP status of a call that should be refused (masto throws MastoHttpError). */
export async function statusOf(call) {
  try {
    await call();
    return 200;
  } catch (error) {
    if (error.statusCode === undefined) throw error;
    return error.statusCode;
  }
}

/** Reads until ``done(value)`` holds, as an app refreshing does: the site delivers
 * through its queue (a real worker), so what someone did shows a moment later. */
export async function eventually(read, done, what, seconds = 30) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${seconds} s waiting for ${what}`);
    await sleep(100);
  }
}

/** A file the pytest side wrote, as the Blob masto uploads (multipart). */
export async function fileBlob(path, type) {
  return new Blob([await readFile(path)], { type });
}

/** The ids of a list of statuses (or accounts, or notifications). */
export const idsOf = (items) => items.map((item) => item.id);

/** Runs a scenario and prints its report as one JSON line; any error is a failure
 * with its message on stderr. */
export function scenario(run) {
  run().then(
    (report) => process.stdout.write(`${JSON.stringify(report)}\n`),
    (error) => {
      process.stderr.write(`${error.stack ?? error}\n`);
      process.exitCode = 1;
    },
  );
}
