// A thread's buttons as masto.js presses them: favourite and reblog (and who did),
// undo both, and read a reply's context. The pytest side checks the site's counts
// and its thread.
import { idsOf, required, rest, scenario } from "./helpers.mjs";

scenario(async () => {
  const alice = rest(required("FEED_ALICE_TOKEN"));
  const bob = rest(required("FEED_BOB_TOKEN"));

  const original = await bob.v1.statuses.create({ status: "Bob starts a thread" });
  const reply = await alice.v1.statuses.create({ status: "Alice answers", inReplyToId: original.id });
  const answer = await bob.v1.statuses.create({ status: "Bob answers back", inReplyToId: reply.id });

  const favourited = await alice.v1.statuses.$select(original.id).favourite();
  const reblog = await alice.v1.statuses.$select(original.id).reblog();
  const seen = await bob.v1.statuses.$select(original.id).fetch();
  const favouritedBy = await alice.v1.statuses.$select(original.id).favouritedBy.list();
  const rebloggedBy = await alice.v1.statuses.$select(original.id).rebloggedBy.list();
  const context = await alice.v1.statuses.$select(reply.id).context.fetch();
  const unfavourited = await alice.v1.statuses.$select(original.id).unfavourite();
  const unreblogged = await alice.v1.statuses.$select(original.id).unreblog();
  const favouritedAgain = await alice.v1.statuses.$select(answer.id).favourite();

  return {
    original: original.id,
    reply: reply.id,
    answer: answer.id,
    favourited: { favourited: favourited.favourited, count: favourited.favouritesCount },
    reblog: { id: reblog.id, of: reblog.reblog?.id, reblogged: reblog.reblog?.reblogged },
    seen: { favourites: seen.favouritesCount, reblogs: seen.reblogsCount, replies: seen.repliesCount },
    favouritedBy: idsOf(favouritedBy),
    rebloggedBy: idsOf(rebloggedBy),
    context: { ancestors: idsOf(context.ancestors), descendants: idsOf(context.descendants) },
    unfavourited: { favourited: unfavourited.favourited, count: unfavourited.favouritesCount },
    unreblogged: { reblogged: unreblogged.reblogged, count: unreblogged.reblogsCount },
    favouritedAgain: favouritedAgain.favourited,
  };
});
