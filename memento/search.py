"""`POST /api/memories/search/`: memory search, with document chunks and conversation messages beside the
memories when asked. It lives in the wiring floor because it joins three apps (memories knows nothing of
documents or conversations); the query is embedded once for all of them."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from conversations.selectors import message_search
from conversations.serializers import ScoredMessageSerializer, with_memory_ids
from core.db_routing import ReplicaReads
from core.serializers import represent
from documents.selectors import chunks_for_memory_search
from documents.serializers import MemorySearchWithChunksResponseSerializer
from memories.bookkeeping import touch_after_response
from memories.models import MemoryEvent
from memories.search import RANKINGS, embed_query, memory_search
from memories.serializers import SearchResponseSerializer as MemoriesOnlyResponseSerializer
from memories.serializers import SearchSerializer
from memories.views import request_filters


class SearchResponseSerializer(MemorySearchWithChunksResponseSerializer):
    """Memory search's answer; with `include_chunks` / `include_messages` also the matching document chunks and
    conversation messages (for RAG prompts)."""

    messages = ScoredMessageSerializer(many=True, required=False, help_text=(
        "Only with include_messages=true: messages for the same query, mode, limit and scope, best first."))


class MemorySearchView(ReplicaReads, APIView):
    """Ranked search over the caller's memories: semantic, keyword or hybrid (default)."""

    replica_actions = frozenset({"post"})

    @extend_schema(request=SearchSerializer, responses=SearchResponseSerializer, operation_id="memories_search")
    def post(self, request):
        body = SearchSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        ranking = data.get("ranking")
        if ranking and ranking not in RANKINGS:
            choices = ", ".join(sorted(RANKINGS))
            raise serializers.ValidationError({"ranking": [f"Unknown ranking; choose one of: {choices}."]})
        filters = request_filters(request, data)
        vector = None
        if data["mode"] != "keyword" and (data["include_chunks"] or data["include_messages"]):
            # once for every search below; on failure each answers from full text (degraded)
            vector, _ = embed_query(data["query"], None, what="search", owner_id=request.user.pk)
        result = memory_search(
            owner=request.user, query=data["query"], mode=data["mode"], threshold=data.get("threshold"),
            limit=data["limit"], filters=filters, ranking=ranking, query_vector=vector,
        )
        touch_after_response(memory_ids=[r.memory.pk for r in result.results], owner_id=request.user.pk,
                             action=MemoryEvent.Action.SEARCH, query=data["query"])
        payload = {
            "mode": result.mode, "ranking": result.ranking, "degraded": result.degraded,
            "results": [{"memory": r.memory, "score": r.score, "parts": r.parts} for r in result.results],
        }
        if data["include_chunks"]:
            chunks = chunks_for_memory_search(
                owner=request.user, query=data["query"], mode=data["mode"], limit=data["limit"],
                threshold=data.get("threshold"), filters=filters, query_vector=vector,
            )
            payload["chunks"] = [{"chunk": r.passage, "score": r.score, "parts": r.parts} for r in chunks]
        if data["include_messages"]:
            messages = message_search(
                owner=request.user, query=data["query"], mode=data["mode"], limit=data["limit"],
                threshold=data.get("threshold"), project=filters.project, all_projects=filters.all_projects,
                query_vector=vector,
            )
            # the ids of the memories each produced in one query (the serializer otherwise asks once per message)
            with_memory_ids([r.passage for r in messages])
            payload["messages"] = [{"message": r.passage, "score": r.score, "parts": r.parts}
                                   for r in messages.results]
        # The answer's shape without the parts not asked for: the same JSON (an absent optional field is left out
        # either way), without building the chunk and message serializers it would not use (~2 ms a search).
        if data["include_messages"]:
            answer = SearchResponseSerializer
        elif data["include_chunks"]:
            answer = MemorySearchWithChunksResponseSerializer
        else:
            answer = MemoriesOnlyResponseSerializer
        return Response(represent(answer, payload))
