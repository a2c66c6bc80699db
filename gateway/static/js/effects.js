// What each table event says in the live region and sounds like, for the one who sees it
// (`g`: the table as it stood before the event).
import { t } from "./i18n.js";
import { announce } from "./announce.js";
import { play } from "./sound.js";
import { toast } from "./toast.js";
import { emojiName } from "./emoji.js";
import { cardLabel, listTeams, revealText, seatName } from "./names.js";

export function effects(ev, g) {
  if (!g) return;
  const seats = g.table.seats;
  const me = g.you.seat;
  const name = (s) => seatName(seats, s);
  switch (ev.type) {
    case "swapped":
      if (ev.seat !== me) {
        play("other");
        announce(
          t("say.swap", {
            name: name(ev.seat),
            placed: cardLabel(ev.placed),
            taken: cardLabel(ev.taken),
            slot: ev.slot + 1,
          }),
        );
      }
      break;
    case "emission":
      play("emission");
      announce(t("say.emission", { name: name(ev.seat), emoji: emojiName(ev.emoji) }));
      break;
    case "floor":
      announce(t(ev.open ? "say.floorOpen" : "say.floorClosed", { name: name(ev.seat) }));
      break;
    case "vote":
      play("vote");
      announce(t("say.vote", { name: name(ev.by) }), { urgent: ev.voters.includes(me) });
      break;
    case "resumed": {
      // A stall under a second and a half is not worth a word (the clock showed it anyway).
      const n = Math.round(ev.shift / 1000);
      if (n >= 2) {
        toast(t("notice.resumed", { n }));
        announce(t("notice.resumed", { n }));
      }
      break;
    }
    case "vote_result":
      announce(t(ev.passed ? "vote.passed" : "vote.failed"));
      toast(t(ev.passed ? "vote.passed" : "vote.failed"));
      break;
    case "reshuffled":
      announce(t("say.reshuffled"));
      break;
    case "round":
      play("round");
      announce(t("say.round", { n: ev.round }));
      if (ev.redeals > 0) toast(t("notice.redeals", { n: ev.redeals }));
      break;
    case "signing":
      announce(t("say.signing", { n: ev.round }));
      break;
    case "sign":
      if (ev.by === null) announce(t("sign.drawn", { emoji: emojiName(ev.emoji) }));
      else if (ev.by !== me) announce(t("say.partnerSign", { name: name(ev.by), emoji: emojiName(ev.emoji) }));
      break;
    case "reveal":
      play("call");
      announce(revealText(ev, seats), { urgent: true });
      break;
    case "over":
      announce(t("over.winners", { n: ev.winners.length, teams: listTeams(ev.winners) }), {
        urgent: true,
      });
      break;
    case "claim":
      // Joining late: the host hears of each request; the one who asked, of its answer.
      if (ev.name !== null && !ev.approved && g.you.host) {
        const text = t("late.asked", { name: ev.name, seat: ev.seat + 1 });
        play("vote");
        toast(text);
        announce(text, { urgent: true });
      } else if (ev.seat === g.myClaim && ev.approved) {
        announce(t("late.granted", { seat: ev.seat + 1 }), { urgent: true });
      } else if (ev.seat === g.myClaim && ev.name === null && seats[ev.seat]?.kind === "bot") {
        toast(t("late.refused"), "error");
        announce(t("late.refused"), { urgent: true });
      }
      break;
    case "seat":
      if (g.table.phase !== "lobby" && seats[ev.seat]?.connected !== ev.connected) {
        announce(t(ev.connected ? "say.back" : "say.gone", { name: ev.name || name(ev.seat) }));
      }
      break;
    default:
      break;
  }
}
