"""The made-up conversations of the feature screenshots (questions, scripted answers, seeded nodes) and
two small helpers: a scripted answer with usage and a click on a menu action."""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow, QMenu

from desktop.demo import Turn
from desktop.screenshots._support import usage

__all__ = ["trigger", "turn"]


def turn(text: str, tokens_in: int, tokens_out: int) -> Turn:
    """A scripted answer with its usage (so the node's token and cost chips show real numbers)."""
    return Turn(text=text, chunk_chars=24, usage=usage(tokens_in, tokens_out))


def trigger(window: QMainWindow, name: str) -> None:
    """Trigger the menu action named ``name`` as a click in the menu would (submenus included)."""
    def walk(menu: QMenu) -> QAction | None:
        for action in menu.actions():
            if action.objectName() == name:
                return action
            sub = action.menu()
            if isinstance(sub, QMenu) and (found := walk(sub)) is not None:
                return found
        return None

    for top in window.menuBar().actions():
        menu = top.menu()
        if isinstance(menu, QMenu) and (action := walk(menu)) is not None:
            action.trigger()
            return
    raise LookupError(f"no action {name!r} in the menu bar")


# -- attachments ---------------------------------------------------------------------------------------

ATTACH_QUESTION = "What stands out in this quarter's sign-ups? The report has the context."
ATTACH_ANSWER = """Three things stand out:

1. **Steady growth**: sign-ups went from **412** in week 1 to **688** in week 7, up **67%**.
2. **The week 6 dip** (590) lines up with the pricing-page rebuild the report mentions on page 1; \
   week 7 more than made up for it.
3. **Week 7 is the best week of the quarter**, the first above 650.

| | Week 1 | Week 7 | Change |
|---|---:|---:|---:|
| Sign-ups | 412 | 688 | +67% |
| Weekly growth (avg.) | | | +9.0% |

At that pace the report's Q4 target of **900 a week** is about four weeks away."""

RECEIPT_QUESTION = "Can I claim this? It was a client breakfast on Tuesday."
RECEIPT_ANSWER = """Yes, as a **client meal**. From the receipt:

| Item | € |
|---|---:|
| 2 x Croissant | 3.80 |
| Pain au levain 800 g | 6.50 |
| Flat white | 3.90 |
| Tarte aux pralines | 4.70 |
| **Total** (VAT 0.99 incl.) | **18.90** |

The loaf of bread is probably not a business expense: leave it out and claim **€12.40**. Add the \
client's name in the claim's note."""

REGIONS_CSV = "region,signups\nEU,1548\nNorth America,1397\nAPAC,566\nLatAm,264\n"

# -- the trip and its forks (canvas, sidebar) -----------------------------------------------------------

TRIP_Q = "Plan a three-day trip to Lyon by train."
TRIP_A = """Here is a plan that keeps the walking easy:

**Day 1: Vieux Lyon and Fourvière**: the *traboules* of the old town, the funicular up to the basilica, \
dinner in a *bouchon*.

**Day 2: Presqu'île and the Confluence**: the Musée des Beaux-Arts, Place Bellecour, a walk along the \
Saône.

**Day 3: Croix-Rousse**: the market on the boulevard and the Mur des Canuts."""
TRIP_Q2 = "And if it rains on day 2?"
TRIP_A2 = "Swap the riverside walk for the Musée Lumière, and have lunch at the Halles Paul Bocuse."
TRIP_FORKS = [
    (1, "Lyon on a budget", "Same plan, but under €300 for two, train included.",
     "Book the TGV 60 days ahead (about €70 return each), stay in a Croix-Rousse guesthouse and eat at "
     "lunch menus: about €290 for two."),
    (3, "Lyon with kids", "We are bringing two kids, 6 and 9. What changes?",
     "Keep Fourvière (the funicular is a hit), add the Parc de la Tête d'Or zoo, and trade the "
     "Beaux-Arts for the Musée Miniature et Cinéma."),
]
CANVAS_OTHERS = [
    ("Reading list", "Three novels set in Lyon?",
     "Try Les Misérables (partly set there), Le Chant du monde by Giono, and a Lyon crime novel by "
     "Frédéric Dard."),
    ("Packing list", "What should I pack for Lyon in October?",
     "Layers, a light rain jacket, comfortable shoes for the hills of Fourvière and Croix-Rousse."),
]

# -- the branch map --------------------------------------------------------------------------------------

BAKERY_QUESTIONS = ("Suggest a name for my bakery.",
                    "Suggest a name for my sourdough bakery in Lyon, one that works in French and English.")
BAKERY_ANSWERS = (
    "How about Rise & Shine Bakery?",
    "Try The Daily Crumb: short, friendly and easy to remember.",
    "Levain & Co.: levain is the French word for a sourdough starter, and it reads well in English too.",
)
BAKERY_FOLLOW_UP = "Nice. Write a tagline for the shop window."
BAKERY_FOLLOW_ANSWER = "*Levain & Co.: slow bread, baked every morning in the Croix-Rousse.*"

# -- search ---------------------------------------------------------------------------------------------

SEARCH_WORD = "sourdough"
SEARCH_NODES = [
    ("Bakery business plan", "Draft the first section of a business plan for a sourdough bakery.",
     "Levain & Co. will sell sourdough loaves and pastries from a 40 m² shop in the Croix-Rousse, "
     "baking 180 loaves a day in the first year."),
    ("Weekend baking", "My sourdough comes out flat. What am I doing wrong?",
     "A flat sourdough loaf usually means the dough over-proofed: shorten the bulk ferment by an hour, "
     "or proof the shaped loaf in the fridge overnight."),
    ("Grocery list", "Milk, eggs, coffee, and flour for the sourdough starter.",
     "Added: milk, eggs, coffee, and 2 kg of rye flour (a starter likes rye)."),
    ("Kitchen science", "Why is sourdough sour?",
     "Lactic and acetic acid bacteria in the starter: a cooler, stiffer starter makes a more sour "
     "sourdough."),
    ("Old draft: market stall", "Could I sell sourdough at the Saturday market?",
     "Yes: the market asks for a food-hygiene certificate and €35 a pitch."),
]

# -- the sidebar ----------------------------------------------------------------------------------------

CODE_Q = "How do I list every .py file under a folder?"
CODE_A = "Use `pathlib.Path('src').rglob('*.py')`; it walks the sub-folders too."
SIDEBAR_OPEN = [
    ("Reading list", "Three novels set in Lyon?",
     "Try *Les Misérables* (partly set there), *Le Chant du monde* by Giono, and a Lyon crime novel by "
     "Frédéric Dard."),
    ("Weekend baking", "My sourdough comes out flat. What am I doing wrong?",
     "It probably over-proofed: shorten the bulk ferment by an hour."),
]
SIDEBAR_CLOSED = [
    ("Old draft: landlord letter", "Draft a note to the landlord about the boiler.", "Dear Mr Martin, ..."),
    ("Gift ideas", "Gift ideas for a dad who likes birds?", "A bird-feeder seed subscription."),
]
