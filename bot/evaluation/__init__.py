"""``frontdesk eval``: how well triage routes a labelled set of messages, and at what cost.

``labelled`` reads the set (JSON Lines, or the shipped sample), ``running`` puts each message
through triage's classify step and route, a few at a time, ``figures`` turns the outcomes
into accuracy, a confusion matrix, costs and times, ``html`` draws them as one page.
Nothing here replies, remembers, runs a tool or records a run.
"""
