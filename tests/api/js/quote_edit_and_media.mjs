// Composing as Elk and Phanpy do: upload an image with its alt text (v2 media), post
// with it, quote that post from another account, edit it, and read its history; a
// followers-only post cannot be quoted. The pytest side checks the site's posts.
import { eventually, fileBlob, idsOf, required, rest, scenario, statusOf } from "./helpers.mjs";

scenario(async () => {
  const alice = rest(required("FEED_ALICE_TOKEN"));
  const bob = rest(required("FEED_BOB_TOKEN"));
  const image = await fileBlob(required("FEED_IMAGE_PATH"), "image/png");

  const media = await alice.v2.media.create({ file: image, description: "A red square" });
  const mediaFile = await fetch(media.url);
  const posted = await alice.v1.statuses.create({
    status: "A picture through masto.js",
    mediaIds: [media.id],
  });
  const quote = await bob.v1.statuses.create({
    status: "Look at this one",
    quotedStatusId: posted.id,
  });
  const edited = await alice.v1.statuses.$select(posted.id).update({
    status: "A red picture through masto.js",
    mediaIds: [media.id],
  });
  const history = await alice.v1.statuses.$select(posted.id).history.list();
  const quoteAfterEdit = await bob.v1.statuses.$select(quote.id).fetch();

  const secret = await alice.v1.statuses.create({ status: "for my followers", visibility: "private" });
  const quoteOfPrivate = await statusOf(() =>
    bob.v1.statuses.create({ status: "quoting it", quotedStatusId: secret.id }),
  );
  // Alice follows Bob: his quote reaches her home feed through the queue.
  const aliceHome = await eventually(
    () => alice.v1.timelines.home.list({ limit: 5 }),
    (page) => idsOf(page).includes(quote.id),
    "Bob's quote in Alice's home feed",
  );

  return {
    media: {
      id: media.id,
      type: media.type,
      description: media.description,
      fileStatus: mediaFile.status,
      fileType: mediaFile.headers.get("content-type"),
    },
    posted: {
      id: posted.id,
      media: posted.mediaAttachments.map((item) => ({ id: item.id, description: item.description })),
    },
    quote: {
      id: quote.id,
      state: quote.quote?.state,
      quotedId: quote.quote?.quotedStatus?.id,
      quotedAfterEdit: quoteAfterEdit.quote?.quotedStatus?.content,
    },
    edited: { content: edited.content, editedAt: edited.editedAt },
    history: history.map((version) => version.content),
    quoteOfPrivate,
    aliceHome: idsOf(aliceHome),
  };
});
