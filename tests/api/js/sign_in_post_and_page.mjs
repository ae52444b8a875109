// masto.js's first start and daily use: read the instance, register an app, sign in
// by password and by the code flow with PKCE, post, reply, delete, page the home feed
// down to its first post and back up, and sign out (revoke). The pytest side checks
// the report. Bob's post reaches the home feed through the site's worker: the
// scenario waits for it as a person pulling to refresh would.
import {
  eventually,
  idsOf,
  pagesOf,
  registerApp,
  required,
  rest,
  revokeToken,
  scenario,
  signInByCode,
  signInByPassword,
  statusOf,
} from "./helpers.mjs";

const SCOPES = "read write follow";

scenario(async () => {
  const username = required("FEED_USERNAME");
  const password = required("FEED_PASSWORD");
  const limit = Number(required("FEED_PAGE_SIZE"));
  const author = rest(required("FEED_AUTHOR_TOKEN"));

  const instance = await rest().v2.instance.fetch();
  const app = await registerApp("masto.js", SCOPES);

  const passwordToken = await signInByPassword(app, username, password, SCOPES);
  const byPassword = rest(passwordToken);
  const passwordAccount = await byPassword.v1.accounts.verifyCredentials();
  const code = await signInByCode(app, username, password, SCOPES);
  const reader = rest(code.accessToken);
  const codeAccount = await reader.v1.accounts.verifyCredentials();

  const posted = await author.v1.statuses.create({ status: "A post through masto.js" });
  const reply = await reader.v1.statuses.create({
    status: "a reply through masto.js",
    inReplyToId: posted.id,
  });
  const repliesCount = (await reader.v1.statuses.$select(posted.id).fetch()).repliesCount;
  await reader.v1.statuses.$select(reply.id).remove();
  const deletedStatus = await statusOf(() => reader.v1.statuses.$select(reply.id).fetch());

  await eventually(
    () => reader.v1.timelines.home.list({ limit }),
    (page) => idsOf(page).includes(posted.id),
    "Bob's post at the top of the home feed",
  );
  const pages = await pagesOf(reader.v1.timelines.home.list({ limit }));
  const oldest = pages.at(-1).at(-1);
  const goingUp = await pagesOf(
    reader.v1.timelines.home.list({ limit, minId: oldest }).setDirection("prev"),
  );

  await revokeToken(app, passwordToken);
  const revokedStatus = await statusOf(() => byPassword.v1.accounts.verifyCredentials());

  return {
    instance: { version: instance.version, domain: instance.domain },
    app: { name: app.name, hasClientId: Boolean(app.clientId) },
    passwordAccount: { id: passwordAccount.id, username: passwordAccount.username },
    codeAccount: { id: codeAccount.id, username: codeAccount.username },
    codeScope: code.scope,
    posted: { id: posted.id, content: posted.content },
    reply: { id: reply.id, inReplyToId: reply.inReplyToId, content: reply.content },
    repliesCount,
    deletedStatus,
    pages,
    goingUp,
    revokedStatus,
  };
});
