// The search box as masto.js asks it (v2 search): posts, people and a tag for a word,
// and a person by @name. The pytest side checks the answers against the site's
// search and that nothing followers-only leaks.
import { idsOf, required, rest, scenario } from "./helpers.mjs";

scenario(async () => {
  const alice = rest(required("FEED_ALICE_TOKEN"));
  const word = required("FEED_WORD");

  const everything = await alice.v2.search.list({ q: word, limit: 10 });
  const statuses = await alice.v2.search.list({ q: word, type: "statuses", limit: 10 });
  const byName = await alice.v2.search.list({ q: "@carol", type: "accounts" });
  const tag = await alice.v2.search.list({ q: `#${word}`, type: "hashtags" });

  return {
    everything: {
      accounts: idsOf(everything.accounts),
      statuses: idsOf(everything.statuses),
      hashtags: everything.hashtags.map((found) => found.name),
    },
    statuses: idsOf(statuses.statuses),
    byName: byName.accounts.map((account) => account.username),
    tag: tag.hashtags.map((found) => found.name),
  };
});
