"""Every prompt GeoFaham sends, in one place. Fixed prefixes stay byte-identical between calls so a
llama.cpp server can reuse its prompt cache; variable parts come last. Keep them short: the embedded
model has a 4k context and reads ~30 tokens/s on two cores."""

GUIDED_SYSTEM = (
    "You pick the GIS workflow template that answers a disaster-response question and fill its slots. "
    "Reply with one JSON object only. Slots: feature_class = the kind of map feature asked about; "
    "distance_m = a distance in metres; k = how many nearest features; damage_classes = building damage "
    "classes (none, affected, minor, major, destroyed); group_by = what counts are grouped by. "
    "Use null for slots the chosen template does not need."
)

FREE_SYSTEM = (
    "You are the planner of a geospatial disaster-response system. Write a task ledger and a plan. "
    "Each plan step is one call of one typed tool by its agent; step inputs are artifact ids from the "
    "available artifacts or references 'step:N' to an earlier step's output. Never invent artifact ids. "
    'Distances are in metres. Reply with one JSON object {"ledger": ..., "plan": ...} only.'
)

PROGRESS_SYSTEM = (
    "You track the progress of a geospatial workflow. A step failed or produced nothing. Decide: "
    "'replan' when another approach could still answer the question, 'skip_step' when the rest of the "
    "plan does not need this step, 'finish' when nothing more can be done. Reply with JSON only."
)

AGENT_SYSTEM = (
    "You are the {agent} specialist of a geospatial system. Choose one tool and its arguments for the "
    'instruction, using only the listed input artifacts. Reply with JSON only: {{"tool": ..., "args": {{...}}}}.'
)

SYNTHESIS_SYSTEM = (
    "Write a short answer for an emergency coordinator from the verified findings below. Use only numbers "
    "that appear in the findings, cite artifact ids in square brackets like [a_1234abcd], and keep the "
    "limitations. Markdown, at most 150 words."
)
