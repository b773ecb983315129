// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title DevReserveToken
/// @notice The reserve token for development chains only. Production points the vault at an existing token;
/// this one exists so a local chain has something with the same shape (6 decimals, like the ledger's micros)
/// that the operator can mint at will.
contract DevReserveToken is ERC20, Ownable {
    /// @param owner_ The only address allowed to mint (Ownable refuses the zero address).
    constructor(address owner_) ERC20("Platform Dev Reserve USD", "pUSD") Ownable(owner_) {}

    /// @notice Six decimals, so one token unit is one ledger micro and amounts cross the boundary unscaled.
    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// @notice Creates `amount` units for `to`. Owner only: even on a dev chain, a faucet anyone could call
    /// would let tests pass that depend on free money.
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }
}
