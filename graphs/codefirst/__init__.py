"""Code-first durable workflows: ``@workflow`` and the calls ``agent``, ``step``, ``parallel``,
``pipeline``, ``ask`` and ``approve`` — plain async Python whose calls survive a restart.

Every completed call is recorded in the run store under a stable key (its name, or
``name[key_by]``); when a run continues (an answer, a crash recovery) the workflow function
runs again from the top and completed calls return their saved output, rebuilt as the type
asked for, as long as their fingerprint (prompt, input, return schema, model options) still
matches. A mismatch refuses, naming the step; ``runs.rerun(run_id, [key])`` is the explicit
choice to run it again. ``ask`` parks the run on a wait, like ``human_node``.

Usage::

    @workflow(name="greet", agents=AgentKit(models={"big": model}))
    async def greet(who: str) -> dict[str, str]:
        card = await agent("card", prompt="Write a short card.", input=who, returns=Card)
        decision = await ask(lambda c: f"Send this?\\n{c.text}", key="send", input=card,
                             returns=Card)
        return {"reply": decision.value.text if decision.approved else "Not sent."}

    runs = Runs(RunStore.open(path))                     # graphs.runs
    result = await runs.start(greet, {"who": "Ann"})     # status 'waiting': the question
    result = await runs.resume(result.run_id, "Approve", by="owner")
"""

from graphs.codefirst.ask import AskCall, Decision, approve, ask
from graphs.codefirst.calls import AgentCall, StepCall, agent, parallel, pipeline, step
from graphs.codefirst.runtime import AgentKit, FingerprintMismatch, FlowCall, FlowError
from graphs.codefirst.view import flow_mermaid, flow_view, matrix_text
from graphs.codefirst.workflow import Workflow, workflow

__all__ = ["AgentCall", "AgentKit", "AskCall", "Decision", "FingerprintMismatch", "FlowCall",
           "FlowError", "StepCall", "Workflow", "agent", "approve", "ask", "flow_mermaid",
           "flow_view", "matrix_text", "parallel", "pipeline", "step", "workflow"]
