"""Lessons, pure: what an action is about, lessons drawn from events, the warning gates and
scores, the judge's heuristic verdicts, evolution between tiers, and how lessons are shown."""
