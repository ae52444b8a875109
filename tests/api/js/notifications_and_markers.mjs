// What the bell shows, as masto.js reads it: Bob follows Alice, favourites and
// mentions her; Alice's app lists her notifications (v1), grouped (v2), counts the
// unread, then writes and reads her markers. The pytest side checks the site's.
import { eventually, idsOf, required, rest, scenario } from "./helpers.mjs";

scenario(async () => {
  const alice = rest(required("FEED_ALICE_TOKEN"));
  const bob = rest(required("FEED_BOB_TOKEN"));
  const alicesPost = required("FEED_ALICES_POST");
  const aliceId = required("FEED_ALICE_ID");

  await bob.v1.accounts.$select(aliceId).follow();
  await bob.v1.statuses.$select(alicesPost).favourite();
  const mention = await bob.v1.statuses.create({ status: "@alice have you seen this?" });

  const notifications = await eventually(
    () => alice.v1.notifications.list({ limit: 10 }),
    (page) => page.length >= 3,
    "three notifications for Alice",
  );
  const grouped = await alice.v2.notifications.list({ limit: 10 });
  const unreadBefore = await alice.v2.notifications.unreadCount.fetch();
  const newest = notifications[0].id;
  const written = await alice.v1.markers.create({
    home: { lastReadId: alicesPost },
    notifications: { lastReadId: newest },
  });
  const markers = await alice.v1.markers.fetch({ timeline: ["home", "notifications"] });
  const unreadAfter = await alice.v2.notifications.unreadCount.fetch();

  return {
    mention: mention.id,
    notifications: notifications.map((note) => ({
      id: note.id,
      type: note.type,
      account: note.account.id,
      status: note.status?.id ?? null,
    })),
    groups: grouped.notificationGroups.map((group) => ({
      type: group.type,
      key: group.groupKey,
      count: group.notificationsCount,
      accounts: group.sampleAccountIds,
      status: group.statusId ?? null,
    })),
    groupedAccounts: idsOf(grouped.accounts),
    groupedStatuses: idsOf(grouped.statuses),
    unreadBefore: unreadBefore.count,
    written: Object.fromEntries(Object.entries(written).map(([name, m]) => [name, m.lastReadId])),
    markers: Object.fromEntries(
      Object.entries(markers).map(([name, m]) => [name, { lastReadId: m.lastReadId, version: m.version }]),
    ),
    unreadAfter: unreadAfter.count,
  };
});
