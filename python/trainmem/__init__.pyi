from typing import Any, Dict, List, Optional, Union

from ._native import Model as Model, TrainmemError as TrainmemError
from ._result import (Advice as Advice, AdviceOption as AdviceOption, Device as Device,
                      DistributedEstimate as DistributedEstimate, Estimate as Estimate, Fit as Fit, Item as Item, ModelInfo as ModelInfo,
                      Solution as Solution)

__version__: str
ModelRef = Union[str, Model]

def load(model: ModelRef) -> Model: ...
def from_hf_config(config: Any, name: Optional[str] = None) -> Model: ...
def from_model(module: Any, name: Optional[str] = None) -> Model: ...
def plan(**fields: Any) -> dict: ...
def estimate(model: ModelRef, *, gpu: Optional[str] = None, memory: Optional[str] = None,
             reserve: Optional[str] = None, dataset: Optional[str] = None, method: str = ..., precision: str = ...,
             optimizer: str = ..., optimizer_impl: str = ..., batch: int = ..., seq: int = ...,
             grad_accum: int = ..., checkpointing: str = ..., attention: str = ...,
             loss: str = ..., framework: str = ..., convention: str = ...,
             lora_rank: int = ..., lora_alpha: float = ..., lora_dropout: float = ...,
             lora_targets: Union[str, List[str]] = ..., dora: bool = ...,
             modules_to_save: Union[str, List[str]] = ..., quant: str = ...,
             double_quant: bool = ..., train_modules: Union[str, List[str]] = ...,
             train_layers: List[int] = ..., eval_strategy: str = ..., eval_batch: int = ...,
             alloc_conf: str = ..., layout: Optional[Dict[str, Any]] = None, args: Any = None,
             peft_config: Any = None, quantization_config: Any = None,
             **plan_fields: Any) -> Estimate: ...
def solve(model: ModelRef, target: str, *, gpu: Optional[str] = None,
          memory: Optional[str] = None, step: Optional[int] = None, args: Any = None,
          peft_config: Any = None,
          quantization_config: Any = None, **plan_fields: Any) -> Solution: ...
def advise(model: ModelRef, *, gpu: Optional[str] = None, memory: Optional[str] = None,
           dataset: Optional[str] = None, args: Any = None, peft_config: Any = None,
           quantization_config: Any = None, **plan_fields: Any) -> Advice: ...
def devices() -> List[Device]: ...
def models() -> List[ModelInfo]: ...
