"""The durable run: its tables (only here), its store, the workflow protocol and the rules.

``RunStore`` records and reads runs; ``Workflow`` is what both runtimes (graphs and code
workflows) implement; ``Runs`` continues runs through that protocol: resume, recover,
expire, cancel, re-run.
"""

from graphs.runs.durable import Runs
from graphs.runs.protocol import GraphWorkflow, Registry, Runtime, Workflow, result_of
from graphs.runs.records import RunInfo, RunRecord, StepRow, WaitInfo
from graphs.runs.store import RunStore

__all__ = ["GraphWorkflow", "Registry", "RunInfo", "RunRecord", "RunStore", "Runs", "Runtime",
           "StepRow", "WaitInfo", "Workflow", "result_of"]
