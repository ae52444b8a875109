// The profile's buttons as masto.js presses them: follow (a locked account's is a
// request), see the followed person's posts arrive in the home feed, unfollow, mute,
// block, and the relationships a profile shows. The pytest side checks the site's.
import { eventually, idsOf, required, rest, scenario } from "./helpers.mjs";

scenario(async () => {
  const alice = rest(required("FEED_ALICE_TOKEN"));
  const [bob, carol, dave, erin] = ["BOB", "CAROL", "DAVE", "ERIN"].map((name) =>
    required(`FEED_${name}_ID`),
  );
  const bobsPost = required("FEED_BOBS_POST");
  const home = () => alice.v1.timelines.home.list({ limit: 10 });

  const before = idsOf(await home());
  const followed = await alice.v1.accounts.$select(bob).follow();
  // Following fills the home feed with Bob's posts: the worker's backfill.
  const afterFollow = await eventually(
    home,
    (page) => idsOf(page).includes(bobsPost),
    "Bob's post at home",
  );
  const requested = await alice.v1.accounts.$select(erin).follow();
  const unfollowed = await alice.v1.accounts.$select(bob).unfollow();
  const afterUnfollow = await eventually(
    home,
    (page) => !idsOf(page).includes(bobsPost),
    "Bob's post gone from home",
  );
  const muted = await alice.v1.accounts.$select(carol).mute();
  const blocked = await alice.v1.accounts.$select(dave).block();
  const relationships = await alice.v1.accounts.relationships.fetch({ id: [bob, carol, dave, erin] });
  const mutes = await alice.v1.mutes.list();
  const blocks = await alice.v1.blocks.list();

  const pick = ({ id, following, requested, muting, blocking, followedBy }) => ({
    id,
    following,
    requested,
    muting,
    blocking,
    followedBy,
  });
  return {
    before,
    followed: pick(followed),
    afterFollow: idsOf(afterFollow),
    requested: pick(requested),
    unfollowed: pick(unfollowed),
    afterUnfollow: idsOf(afterUnfollow),
    muted: pick(muted),
    blocked: pick(blocked),
    relationships: relationships.map(pick),
    mutes: idsOf(mutes),
    blocks: idsOf(blocks),
  };
});
