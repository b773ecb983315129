// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title ServiceRegistry
/// @notice The public record of the marketplace's listings: for each listing id, the developer who owns it and the
/// keccak256 of its manifest's canonical JSON (RFC 8785). Anyone can read a listing's manifest from the marketplace,
/// hash it and compare it with what is recorded here, so the marketplace cannot quietly serve another manifest
/// (another price, another endpoint) than the one it registered.
/// @dev Only the operator (the marketplace's signing key) writes: developers sign in to the marketplace off chain
/// and the marketplace pays the gas. A listing's owner is fixed by its first registration; later registrations
/// by the operator can move its manifest hash but never hand the listing to another owner, so even a misused
/// operator key cannot rewrite who owns what was registered.
contract ServiceRegistry {
    /// @dev Packed into two slots: owner (20) + updatedAt (8), then the hash.
    struct Service {
        address owner;
        uint64 updatedAt;
        bytes32 manifestHash;
    }

    /// @notice The only address allowed to register.
    address public operator;

    mapping(bytes32 => Service) private _services;

    /// @notice A listing registered for the first time.
    event ServiceRegistered(bytes32 indexed serviceId, address indexed owner, bytes32 manifestHash);
    /// @notice A registered listing's manifest hash recorded again (changed, or re-published unchanged).
    event ManifestUpdated(bytes32 indexed serviceId, bytes32 manifestHash);
    event OperatorTransferred(address indexed previousOperator, address indexed newOperator);

    error NotOperator();
    error ZeroAddress();
    error ZeroServiceId();
    error ZeroManifestHash();
    error OwnerMismatch(bytes32 serviceId, address registeredOwner);

    modifier onlyOperator() {
        if (msg.sender != operator) revert NotOperator();
        _;
    }

    /// @param operator_ The marketplace's signing key.
    constructor(address operator_) {
        if (operator_ == address(0)) revert ZeroAddress();
        operator = operator_;
        emit OperatorTransferred(address(0), operator_);
    }

    /// @notice Records `manifestHash` for `serviceId` (a listing UUID, right-aligned in 32 bytes). The first call
    /// for an id fixes its owner; later calls must name the same owner and only update the hash.
    function register(bytes32 serviceId, bytes32 manifestHash, address owner) external onlyOperator {
        if (serviceId == bytes32(0)) revert ZeroServiceId();
        if (manifestHash == bytes32(0)) revert ZeroManifestHash();
        if (owner == address(0)) revert ZeroAddress();
        Service storage service = _services[serviceId];
        address registered = service.owner;
        if (registered != address(0) && registered != owner) revert OwnerMismatch(serviceId, registered);
        service.manifestHash = manifestHash;
        service.updatedAt = uint64(block.timestamp);
        if (registered == address(0)) {
            service.owner = owner;
            emit ServiceRegistered(serviceId, owner, manifestHash);
        } else {
            emit ManifestUpdated(serviceId, manifestHash);
        }
    }

    /// @notice A listing's record; all zero for an id never registered.
    function services(bytes32 serviceId) external view returns (address owner, bytes32 manifestHash, uint64 updatedAt) {
        Service storage service = _services[serviceId];
        return (service.owner, service.manifestHash, service.updatedAt);
    }

    /// @notice Hands the operator's right to another key (a key rotation).
    function transferOperator(address newOperator) external onlyOperator {
        if (newOperator == address(0)) revert ZeroAddress();
        emit OperatorTransferred(operator, newOperator);
        operator = newOperator;
    }
}
